//! This process's CPU time and thread count, for tests that check that
//! abandoned work stops running and its threads go (issue 30). Such tests
//! measure the whole process, so they run alone in theirs (a test binary
//! of their own, or a child process).

use std::time::Duration;

/// User plus system CPU time of the whole process so far.
pub fn cpu_time() -> Duration {
    let mut usage = std::mem::MaybeUninit::<libc::rusage>::zeroed();
    // SAFETY: getrusage writes one rusage into the pointed-to storage.
    let rc = unsafe { libc::getrusage(libc::RUSAGE_SELF, usage.as_mut_ptr()) };
    assert_eq!(rc, 0, "getrusage failed");
    // SAFETY: initialised by the successful call above.
    let usage = unsafe { usage.assume_init() };
    let tv = |t: libc::timeval| {
        Duration::from_secs(t.tv_sec.unsigned_abs())
            + Duration::from_micros(t.tv_usec.unsigned_abs())
    };
    tv(usage.ru_utime) + tv(usage.ru_stime)
}

/// The CPU time the process uses while it sleeps `window` on this thread.
pub fn cpu_over(window: Duration) -> Duration {
    let before = cpu_time();
    std::thread::sleep(window);
    cpu_time().saturating_sub(before)
}

/// How many threads the process has now (`/proc/self/task`).
pub fn threads() -> usize {
    std::fs::read_dir("/proc/self/task")
        .expect("read /proc/self/task")
        .count()
}

/// The names of the process's threads (`/proc/self/task/*/comm`), for
/// messages saying which threads are left.
pub fn thread_names() -> Vec<String> {
    let Ok(dir) = std::fs::read_dir("/proc/self/task") else {
        return Vec::new();
    };
    let mut names: Vec<String> = dir
        .filter_map(|e| std::fs::read_to_string(e.ok()?.path().join("comm")).ok())
        .map(|n| n.trim().to_string())
        .collect();
    names.sort();
    names
}

/// Waits up to `limit` for the thread count to come down to `count` or
/// below; the count reached.
pub fn wait_threads_at_most(count: usize, limit: Duration) -> usize {
    let deadline = std::time::Instant::now() + limit;
    loop {
        let now = threads();
        if now <= count || std::time::Instant::now() >= deadline {
            return now;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// The thread count once it stopped changing (the same over half a
/// second), or after `limit`: a baseline taken while threads of earlier
/// work are still exiting would be too high.
pub fn steady_threads(limit: Duration) -> usize {
    let deadline = std::time::Instant::now() + limit;
    let mut last = threads();
    loop {
        std::thread::sleep(Duration::from_millis(500));
        let now = threads();
        if now == last || std::time::Instant::now() >= deadline {
            return now;
        }
        last = now;
    }
}
