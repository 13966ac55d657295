# Flag sets shared by the training scripts (sourced by experiments/training/train_bo_long.sh and experiments/training/gpu_bo_batch.sh),
# so a recipe that runs on the CPU queue and on a lent GPU is written once.

# BO-shaped data (experiments/probes/probe_bo_data.sh cluster): half the context clustered, half the targets near it;
# scored on the plain prior so runs on either prior share one yardstick
BO_SHAPED_DATA=(--prior-set near_context_frac=0.5 --prior-set context_cluster_frac=0.5
                --eval-prior-set near_context_frac=0.0)
# cmanp-bo v4's model: CMANP with 32 latents per layer and a 16-point elite memory
CMANP_BO_ELITE=(--model cmanp --set n_latents=32 --set n_block_latents=32 --set n_elite=16)
