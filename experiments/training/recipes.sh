# Flag sets shared by the training scripts (sourced by experiments/training/train_bo_long.sh and experiments/training/gpu_bo_batch.sh),
# so a recipe that runs on the CPU queue and on a lent GPU is written once.

# BO-shaped data (experiments/probes/probe_bo_data.sh cluster): half the context clustered, half the targets near it;
# scored on the plain prior so runs on either prior share one yardstick
BO_SHAPED_DATA=(--prior-set near_context_frac=0.5 --prior-set context_cluster_frac=0.5
                --eval-prior-set near_context_frac=0.0)
# cmanp-bo v4's model: CMANP with 32 latents per layer and a 16-point elite memory
CMANP_BO_ELITE=(--model cmanp --set n_latents=32 --set n_block_latents=32 --set n_elite=16)

# Issue 49's prior: inputs to d = 16 (zero-padded to 16 columns), contexts to 300 points, a fifth of the
# dimensions nearly inert and a fifth warped (Kumaraswamy CDF); trained on BO-shaped data as above and
# scored on the same prior with half the held-out points near the context (at d >= 8 uniform ones sit far
# from every observation). --eval-prior-set replaces --prior-set's parameters, so it repeats the base.
BO16_BASE=(dims='[1,2,3,4,5,6,7,8,9,10,11,12,13,14,15,16]' x_dim=16 max_context=300 irrelevant_prob=0.2
           input_warp_prob=0.2)
BO16_PRIOR=(); BO16_EVAL=()
for p in "${BO16_BASE[@]}"; do BO16_PRIOR+=(--prior-set "$p"); BO16_EVAL+=(--eval-prior-set "$p"); done
BO16_PRIOR+=(--prior-set near_context_frac=0.5 --prior-set context_cluster_frac=0.5)
BO16_EVAL+=(--eval-prior-set near_context_frac=0.5)
