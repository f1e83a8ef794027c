//! `--shard auto`: which slice of the schedule this process plays, read from
//! the environment of a Kubernetes Indexed Job or a Slurm job array.

use anyhow::{bail, Context};

use super::schedule::Shard;

/// `--shard auto`: the slice from a Kubernetes Indexed Job or a Slurm array.
///
/// N given explicitly (SCHMIER_SHARDS, else the file's `shards`) wins, and then
/// the task id is the shard number: a Slurm task re-submitted alone
/// (`sbatch --array=2`) still plays shard 2 of N. Without it a Slurm array's
/// range gives N and the shard (id minus the minimum, over the step); a one-task
/// array cannot, and is refused rather than taken for a whole tournament.
pub(super) fn auto_shard(
    file_shards: Option<u32>,
    env: impl Fn(&str) -> Option<String>,
) -> anyhow::Result<Shard> {
    let number = |key: &str| -> anyhow::Result<Option<u32>> {
        env(key)
            .map(|v| {
                v.trim()
                    .parse::<u32>()
                    .with_context(|| format!("--shard auto: {key}={v:?} is not a number"))
            })
            .transpose()
    };
    let explicit = match number("SCHMIER_SHARDS")? {
        Some(n) => Some((n, "SCHMIER_SHARDS")),
        None => file_shards.map(|n| (n, "`shards` in the tournament file")),
    };
    let (index, count, source) = if let Some(k) = number("JOB_COMPLETION_INDEX")? {
        let (n, _) = explicit.context(
            "--shard auto: JOB_COMPLETION_INDEX is set but not the shard count; \
             set `shards` in the tournament file or SCHMIER_SHARDS (the Job's completions)",
        )?;
        (k, n, "JOB_COMPLETION_INDEX")
    } else if let Some(id) = number("SLURM_ARRAY_TASK_ID")? {
        let step = number("SLURM_ARRAY_TASK_STEP")?.unwrap_or(1).max(1);
        if let Some((n, from)) = explicit {
            if step > 1 {
                bail!(
                    "--shard auto: with the shard count from {from} the array's task ids \
                     are the shard numbers 0..{}, but this array steps by {step}; \
                     use --array=0-{} or leave the count unset",
                    n.saturating_sub(1),
                    n.saturating_sub(1)
                );
            }
            if id >= n {
                bail!(
                    "--shard auto: SLURM_ARRAY_TASK_ID={id} is past the last shard: \
                     {n} shards (from {from}) are task ids 0..{}",
                    n.saturating_sub(1)
                );
            }
            (id, n, "SLURM_ARRAY_TASK_ID")
        } else {
            let need = |key: &str| {
                number(key)?.with_context(|| {
                    format!("--shard auto: SLURM_ARRAY_TASK_ID is set but not {key}")
                })
            };
            let (min, max, tasks) = (
                need("SLURM_ARRAY_TASK_MIN")?,
                need("SLURM_ARRAY_TASK_MAX")?,
                need("SLURM_ARRAY_TASK_COUNT")?,
            );
            if tasks <= 1 {
                bail!(
                    "--shard auto: a one-task array (task {id}) does not tell how many shards \
                     there are; set SCHMIER_SHARDS (or `shards` in the tournament file), \
                     or give --shard {id}/N"
                );
            }
            // An evenly stepped range (0-7, 1-8, 0-14:2) numbers the shards; a
            // list (0,3,5) does not.
            let n = (max - min) / step + 1;
            if (max - min) % step != 0 || n != tasks || id < min || (id - min) % step != 0 {
                bail!(
                    "--shard auto: the array (tasks {min}..{max} step {step}, {tasks} tasks) \
                     is not an evenly stepped range; set SCHMIER_SHARDS and number the \
                     tasks 0..N-1, or give --shard K/N"
                );
            }
            ((id - min) / step, n, "SLURM_ARRAY_TASK_ID")
        }
    } else {
        bail!("--shard auto: neither JOB_COMPLETION_INDEX (Kubernetes) nor SLURM_ARRAY_TASK_ID (Slurm) is set; give --shard K/N");
    };
    format!("{index}/{count}")
        .parse::<Shard>()
        .map_err(|e| anyhow::anyhow!("--shard auto (from {source}): {e}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn env(pairs: &'static [(&'static str, &'static str)]) -> impl Fn(&str) -> Option<String> {
        move |k: &str| {
            pairs
                .iter()
                .find(|(n, _)| *n == k)
                .map(|(_, v)| v.to_string())
        }
    }

    /// What Slurm 22.05 sets for task `id` of `sbatch --array=min-max:step`.
    fn slurm(id: u32, min: u32, max: u32, step: u32) -> impl Fn(&str) -> Option<String> {
        let count = (max - min) / step + 1;
        move |k: &str| match k {
            "SLURM_ARRAY_TASK_ID" => Some(id.to_string()),
            "SLURM_ARRAY_TASK_MIN" => Some(min.to_string()),
            "SLURM_ARRAY_TASK_MAX" => Some(max.to_string()),
            "SLURM_ARRAY_TASK_STEP" => Some(step.to_string()),
            "SLURM_ARRAY_TASK_COUNT" => Some(count.to_string()),
            _ => None,
        }
    }

    fn with_shards(
        n: &'static str,
        inner: impl Fn(&str) -> Option<String>,
    ) -> impl Fn(&str) -> Option<String> {
        move |k: &str| {
            (k == "SCHMIER_SHARDS")
                .then(|| n.to_owned())
                .or_else(|| inner(k))
        }
    }

    #[test]
    fn shard_auto_reads_kubernetes_and_slurm() {
        let k8s = auto_shard(Some(4), env(&[("JOB_COMPLETION_INDEX", "3")])).unwrap();
        assert_eq!(k8s, Shard { index: 3, count: 4 });
        let err = auto_shard(None, env(&[("JOB_COMPLETION_INDEX", "0")])).unwrap_err();
        assert!(err.to_string().contains("shard count"), "{err}");
        let err = auto_shard(None, env(&[])).unwrap_err();
        assert!(err.to_string().contains("give --shard K/N"), "{err}");
        // Arrays from 0, from 1, and stepped: the range gives K and N.
        let from0 = auto_shard(None, slurm(2, 0, 7, 1)).unwrap();
        assert_eq!(from0, Shard { index: 2, count: 8 });
        let from1 = auto_shard(None, slurm(2, 1, 2, 1)).unwrap();
        assert_eq!(from1, Shard { index: 1, count: 2 });
        let stepped = auto_shard(None, slurm(6, 0, 14, 2)).unwrap();
        assert_eq!(stepped, Shard { index: 3, count: 8 });
        // A list (--array=0,3,5: Slurm says min 0, max 5, step 1, 3 tasks).
        let list = env(&[
            ("SLURM_ARRAY_TASK_ID", "3"),
            ("SLURM_ARRAY_TASK_MIN", "0"),
            ("SLURM_ARRAY_TASK_MAX", "5"),
            ("SLURM_ARRAY_TASK_STEP", "1"),
            ("SLURM_ARRAY_TASK_COUNT", "3"),
        ]);
        let err = auto_shard(None, list).unwrap_err().to_string();
        assert!(err.contains("not an evenly stepped range"), "{err}");
    }

    #[test]
    fn shard_auto_resubmitted_slurm_task_plays_its_own_shard() {
        // `sbatch --array=2` alone: min = max = 2, one task. Without the count it
        // must not become shard 0/1 (a whole tournament).
        let err = auto_shard(None, slurm(2, 2, 2, 1)).unwrap_err().to_string();
        assert!(err.contains("one-task array (task 2)"), "{err}");
        assert!(err.contains("SCHMIER_SHARDS"), "{err}");
        // With the count, the task id is the shard: the same as in the full array.
        let alone = auto_shard(None, with_shards("8", slurm(2, 2, 2, 1))).unwrap();
        assert_eq!(alone, Shard { index: 2, count: 8 });
        let full = auto_shard(None, with_shards("8", slurm(2, 0, 7, 1))).unwrap();
        assert_eq!(full, alone);
        assert_eq!(auto_shard(Some(8), slurm(2, 2, 2, 1)).unwrap(), alone);
        // Ids past the count, and a stepped array with an explicit count: refused.
        let err = auto_shard(None, with_shards("8", slurm(8, 1, 8, 1)))
            .unwrap_err()
            .to_string();
        assert!(
            err.contains("SLURM_ARRAY_TASK_ID=8 is past the last shard: 8 shards (from SCHMIER_SHARDS) are task ids 0..7"),
            "{err}"
        );
        let err = auto_shard(Some(8), slurm(2, 0, 14, 2))
            .unwrap_err()
            .to_string();
        assert!(err.contains("steps by 2"), "{err}");
    }
}
