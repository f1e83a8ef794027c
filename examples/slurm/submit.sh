#!/bin/sh
# Submits the sharded tournament and its merge; run from the repository root.
#
#   examples/slurm/submit.sh        every shard (tasks 0-7), then the merge
#   examples/slurm/submit.sh 2      shard 2 again (it resumes), then the merge
#
# The merge waits for the array's end whatever happened to its tasks (afterany):
# a lost task makes it refuse, leaving nothing behind, and re-submitting that
# task with this script queues a merge that then succeeds.
set -eu
# Slurm opens each job's --output file (results/...) before the job starts.
mkdir -p results
# Every shard deals from one seed secret (mixed into the tournament's seed, so
# no bot can find the deals from its hand), made once and readable by you
# alone; a re-submission keeps it. tournament.json reveals it once merged.
if [ ! -e results/seed-secret ]; then
    (umask 077 && target/release/referee secret > results/seed-secret.new &&
        mv results/seed-secret.new results/seed-secret)
fi
array=$(sbatch --parsable ${1:+--array="$1"} examples/slurm/tournament.sbatch)
array=${array%%;*}
merge=$(sbatch --parsable --dependency="afterany:$array,singleton" examples/slurm/merge.sbatch)
merge=${merge%%;*}
echo "tournament: job $array (logs in results/slurm-${array}_*.out)"
echo "merge:      job $merge (into results/merged, log results/slurm-$merge-merge.out)"
