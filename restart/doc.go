// Package restart decides whether and when a failed job restarts: Flink's
// restart strategies (exponential-delay, fixed-delay, failure-rate, none)
// as pure state machines with time passed in, and Recurrence, which spots a
// failure no restart can get past — the same error at the same position of
// the job's input or output as an earlier failure.
//
// The caller (the job driver) keeps one Backoff per run of a job: on every
// failure it calls Failed with the current time and a random draw in [0, 1)
// for the jitter, and carries out the Decision — waits Delay and restarts,
// or fails the job with Reason. Nothing here reads a clock, sleeps or draws
// random numbers.
package restart
