//! relaunch-sched: queue actors and the scheduler (see README.md).
