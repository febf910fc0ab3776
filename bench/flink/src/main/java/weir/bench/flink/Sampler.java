package weir.bench.flink;

import java.util.ArrayList;
import java.util.List;
import java.util.Locale;

/**
 * Samples a running job: every sampleMs the events the readers emitted
 * and the process CPU (bench/nexmark turns these into throughput over time
 * and a steady-state rate past its warm-up), and every 20 ms the
 * JobManager's checkpoint gauges, to record each completed checkpoint's
 * duration and size. A checkpoint that completes and is followed by the
 * next within 20 ms is counted (numberOfCompletedCheckpoints) but its
 * duration and size are not seen.
 */
final class Sampler extends Thread {
    private static final long POLL_MS = 20;

    private final com.sun.management.OperatingSystemMXBean os;
    private final long t0;
    private final long cpu0;
    private final long sampleMs;
    private final List<long[]> samples = new ArrayList<>(); // {ms since submission, events, cpu ns}
    private final List<long[]> checkpoints = new ArrayList<>(); // {id, duration ms, size bytes}
    private volatile boolean done;
    double[] totals;

    Sampler(com.sun.management.OperatingSystemMXBean os, long t0, long cpu0, long sampleMs) {
        super("weir-sampler");
        setDaemon(true);
        this.os = os;
        this.t0 = t0;
        this.cpu0 = cpu0;
        this.sampleMs = sampleMs;
    }

    @Override
    public void run() {
        long next = t0 + sampleMs * 1_000_000L;
        while (!done) {
            try {
                Thread.sleep(POLL_MS);
            } catch (InterruptedException e) {
                return;
            }
            pollCheckpoint();
            long now = System.nanoTime();
            if (now >= next) {
                sample(now, os.getProcessCpuTime());
                next += sampleMs * 1_000_000L;
            }
        }
    }

    private synchronized void sample(long now, long cpu) {
        samples.add(new long[] {(now - t0) / 1_000_000L, Progress.EVENTS.sum(), cpu - cpu0});
    }

    private synchronized void pollCheckpoint() {
        long id = StatsReporter.value("lastCompletedCheckpointId");
        if (id <= 0 || (!checkpoints.isEmpty() && checkpoints.get(checkpoints.size() - 1)[0] == id)) {
            return;
        }
        checkpoints.add(new long[] {id, StatsReporter.value("lastCheckpointDuration"),
                StatsReporter.value("lastCheckpointSize")});
    }

    /** Ends sampling with a last sample at the job's end. */
    void finish(long now, long cpu) {
        done = true;
        try {
            join(1000);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        pollCheckpoint();
        sample(now, cpu);
    }

    /** The samples and checkpoints as JSON fields (no braces). */
    synchronized String json() {
        StringBuilder b = new StringBuilder("\"samples\":[");
        for (int i = 0; i < samples.size(); i++) {
            long[] s = samples.get(i);
            b.append(i > 0 ? "," : "").append(String.format(Locale.ROOT, "[%.3f,%d,%.3f]", s[0] / 1e3, s[1], s[2] / 1e9));
        }
        b.append("],\"checkpoints\":").append(Math.max(StatsReporter.value("numberOfCompletedCheckpoints"), 0));
        b.append(",\"checkpoint_list\":[");
        for (int i = 0; i < checkpoints.size(); i++) {
            long[] c = checkpoints.get(i);
            b.append(i > 0 ? "," : "").append(String.format(Locale.ROOT, "[%d,%d,%d]", c[0], c[1], c[2]));
        }
        b.append("],\"rows\":").append(Progress.ROWS.sum()).append(",\"changes\":").append(Progress.CHANGES.sum());
        return b.toString();
    }
}
