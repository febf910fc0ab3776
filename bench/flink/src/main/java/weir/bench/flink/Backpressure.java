package weir.bench.flink;

import org.apache.flink.api.common.JobID;
import org.apache.flink.api.common.eventtime.WatermarkStrategy;
import org.apache.flink.api.common.typeinfo.Types;
import org.apache.flink.configuration.Configuration;
import org.apache.flink.runtime.execution.ExecutionState;
import org.apache.flink.runtime.executiongraph.AccessExecutionGraph;
import org.apache.flink.runtime.executiongraph.AccessExecutionVertex;
import org.apache.flink.runtime.jobgraph.JobGraph;
import org.apache.flink.runtime.jobgraph.JobVertex;
import org.apache.flink.runtime.minicluster.MiniCluster;
import org.apache.flink.runtime.minicluster.MiniClusterConfiguration;
import org.apache.flink.runtime.state.KeyGroupRangeAssignment;
import org.apache.flink.runtime.util.EnvironmentInformation;
import org.apache.flink.streaming.api.environment.StreamExecutionEnvironment;

import weir.bench.flink.backpressure.BurstSource;
import weir.bench.flink.backpressure.CheckpointStats;
import weir.bench.flink.backpressure.SlowSink;

import java.net.URI;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/**
 * The Flink side of bench/backpressure (issue 17): the same job — a source
 * of 2 splits at parallelism 2 emitting {@code --burst} records per split per
 * {@code --pause-ms}, a keyBy, a sink at parallelism 2 taking
 * {@code --sink-sleep-us} per record (10 % of the source's rate with the
 * defaults), a checkpoint every {@code --interval-ms}, exactly-once — run for
 * {@code --duration-ms} in each mode on its own local MiniCluster: aligned,
 * aligned with {@code execution.checkpointing.aligned-checkpoint-timeout},
 * unaligned, each with {@code taskmanager.network.memory.buffer-debloat.enabled}
 * off and on. It prints one JSON line per mode with the JobManager's own
 * checkpoint statistics, read from the MiniCluster's REST API
 * ({@code /jobs/:id/checkpoints} and, for the sink's start delay,
 * {@code /jobs/:id/checkpoints/details/:cid/subtasks/:vid}).
 *
 * <p>Each of the 4 subtasks runs in a TaskManager of its own (4 TaskManagers of
 * one slot, the sink in a slot-sharing group of its own), so every channel is
 * a remote, credit-based one as Weir's are; a local channel between subtasks
 * of one TaskManager has no credits.
 *
 * <pre>
 * Backpressure [--duration-ms 8000] [--interval-ms 1000] [--timeout-ms 100] [--burst 100]
 *              [--pause-ms 10] [--sink-sleep-us 1000] [--debloat-target-ms 1000]
 *              [--segment-size 4kb] [--modes aligned,aligned+timeout,unaligned] [--debloat off,on]
 * </pre>
 */
public final class Backpressure {
    private Backpressure() {}

    private static final int PARALLELISM = 2;
    private static final int MAX_PARALLELISM = 128; // Weir's keygroup.DefaultMaxParallelism
    private static final int SPLITS = 2;

    /** One run's checkpointing and debloating. */
    record Mode(String name, boolean unaligned, long timeoutMs, boolean debloat) {}

    /** What every run of this process shares. */
    record Settings(long durationMs, long intervalMs, long timeoutMs, int burst, long pauseMs, long sinkSleepUs,
            long debloatTargetMs, String segmentSize) {}

    public static void main(String[] args) throws Exception {
        Map<String, String> a = new HashMap<>(Map.of(
                "--duration-ms", "8000", "--interval-ms", "1000", "--timeout-ms", "100", "--burst", "100",
                "--pause-ms", "10", "--sink-sleep-us", "1000", "--debloat-target-ms", "1000",
                "--segment-size", "4kb", "--modes", "aligned,aligned+timeout,unaligned", "--debloat", "off,on"));
        for (int i = 0; i < args.length; i++) {
            if (!a.containsKey(args[i]) || i + 1 == args.length) {
                throw new IllegalArgumentException("unknown argument or missing value: " + args[i]);
            }
            a.put(args[i], args[++i]);
        }
        Settings s = new Settings(Long.parseLong(a.get("--duration-ms")), Long.parseLong(a.get("--interval-ms")),
                Long.parseLong(a.get("--timeout-ms")), Integer.parseInt(a.get("--burst")),
                Long.parseLong(a.get("--pause-ms")), Long.parseLong(a.get("--sink-sleep-us")),
                Long.parseLong(a.get("--debloat-target-ms")), a.get("--segment-size"));
        for (Mode m : modes(s, a.get("--modes").split(","), a.get("--debloat").split(","))) {
            System.out.println(run(s, m));
            System.out.flush();
        }
        System.exit(0); // MiniCluster threads may linger
    }

    /** The modes in bench/backpressure's order: each checkpointing mode with debloating off, then on. */
    static List<Mode> modes(Settings s, String[] kinds, String[] debloat) {
        List<Mode> out = new ArrayList<>();
        for (String k : kinds) {
            for (String d : debloat) {
                boolean on = switch (d) {
                    case "on" -> true;
                    case "off" -> false;
                    default -> throw new IllegalArgumentException("--debloat: want off and/or on, got " + d);
                };
                String suffix = on ? " +debloat" : "";
                out.add(switch (k) {
                    case "aligned" -> new Mode("aligned" + suffix, false, 0, on);
                    case "aligned+timeout" -> new Mode("aligned+timeout " + s.timeoutMs() + "ms" + suffix, true,
                            s.timeoutMs(), on);
                    case "unaligned" -> new Mode("unaligned" + suffix, true, 0, on);
                    default -> throw new IllegalArgumentException(
                            "--modes: want aligned, aligned+timeout and/or unaligned, got " + k);
                });
            }
        }
        return out;
    }

    /** Runs the job in mode m on a MiniCluster of its own and returns its JSON line. */
    static String run(Settings s, Mode m) throws Exception {
        Path tmp = Files.createTempDirectory("weir-flink-backpressure");
        Configuration conf = configuration(s, m, tmp);
        MiniClusterConfiguration mcc = new MiniClusterConfiguration.Builder()
                .setConfiguration(conf).setNumTaskManagers(2 * PARALLELISM).setNumSlotsPerTaskManager(1)
                .withRandomPorts().build();
        try (MiniCluster mc = new MiniCluster(mcc)) {
            mc.start();
            URI rest = mc.getRestAddress().get();
            JobGraph jg = jobGraph(s, conf);
            List<JobVertex> vs = jg.getVerticesSortedTopologicallyFromSources();
            String sinkVertex = vs.get(vs.size() - 1).getID().toHexString();
            JobID id = mc.submitJob(jg).get().getJobID();
            awaitFlowing(mc, id);
            long sunk0 = SlowSink.SUNK.get();
            long since = System.currentTimeMillis();
            long t0 = System.nanoTime();
            Thread.sleep(s.durationMs());
            long sunk = SlowSink.SUNK.get() - sunk0;
            double secs = (System.nanoTime() - t0) / 1e9;
            CheckpointStats st = CheckpointStats.read(rest, id.toHexString(), sinkVertex, since);
            mc.cancelJob(id).get();
            return json(s, m, st, sunk / secs);
        } finally {
            deleteTree(tmp);
        }
    }

    static Configuration configuration(Settings s, Mode m, Path tmp) {
        Configuration c = new Configuration();
        c.setString("parallelism.default", Integer.toString(PARALLELISM));
        c.setString("state.backend.type", "hashmap");
        c.setString("execution.checkpointing.interval", s.intervalMs() + " ms");
        c.setString("execution.checkpointing.mode", "EXACTLY_ONCE");
        c.setString("execution.checkpointing.timeout", "30 s");
        c.setString("execution.checkpointing.tolerable-failed-checkpoints", Integer.toString(Integer.MAX_VALUE));
        c.setString("execution.checkpointing.storage", "filesystem");
        c.setString("execution.checkpointing.dir", tmp.resolve("checkpoints").toUri().toString());
        c.setString("execution.checkpointing.unaligned.enabled", Boolean.toString(m.unaligned()));
        c.setString("execution.checkpointing.aligned-checkpoint-timeout", m.timeoutMs() + " ms");
        c.setString("taskmanager.network.memory.buffer-debloat.enabled", Boolean.toString(m.debloat()));
        c.setString("taskmanager.network.memory.buffer-debloat.target", s.debloatTargetMs() + " ms");
        // Flink 2.x has no setting for buffers per channel (2 exclusive per
        // channel, 8 floating per gate, at most 10 per output subpartition);
        // the segment size is what sets the data in flight.
        c.setString("taskmanager.memory.segment-size", s.segmentSize());
        c.setString("taskmanager.memory.network.min", "16 mb");
        c.setString("taskmanager.memory.network.max", "16 mb");
        c.setString("web.checkpoints.history", "100000");
        return c;
    }

    /** Source (p=2, 2 splits) → keyBy → slow sink (p=2), each sink subtask in a TaskManager of its own. */
    static JobGraph jobGraph(Settings s, Configuration conf) {
        StreamExecutionEnvironment env = new StreamExecutionEnvironment(conf);
        env.setParallelism(PARALLELISM);
        env.setMaxParallelism(MAX_PARALLELISM);
        env.fromSource(new BurstSource(keys(), s.burst(), s.pauseMs()), WatermarkStrategy.noWatermarks(), "seq",
                        Types.TUPLE(Types.LONG, Types.LONG))
                .uid("seq")
                .keyBy(t -> t.f0, Types.LONG)
                .sinkTo(new SlowSink(s.sinkSleepUs() * 1000))
                .name("slow")
                .uid("sink")
                .slotSharingGroup("sink");
        return env.getStreamGraph().getJobGraph();
    }

    /**
     * The key of each split: in Weir's job split i emits key i, whose key
     * group sink subtask i owns (Weir hashes keys its own way); here split
     * i's key is the first k ≡ i (mod splits) that Flink's key-group hash also
     * sends to sink subtask i, so each source subtask feeds one sink subtask
     * over one channel, as in Weir.
     */
    static long[] keys() {
        long[] keys = new long[SPLITS];
        for (int i = 0; i < SPLITS; i++) {
            long k = i;
            while (KeyGroupRangeAssignment.assignKeyToParallelOperator(k, MAX_PARALLELISM, PARALLELISM)
                    != i % PARALLELISM) {
                k += SPLITS;
            }
            keys[i] = k;
        }
        return keys;
    }

    /**
     * Waits until every subtask is RUNNING and the sink has taken a record:
     * the measured window starts when data flows (a MiniCluster of 4
     * TaskManagers takes seconds to get there on a loaded machine, Weir's
     * job milliseconds), and only checkpoints triggered in it count.
     */
    static void awaitFlowing(MiniCluster mc, JobID id) throws Exception {
        long sunk = SlowSink.SUNK.get();
        long deadline = System.nanoTime() + 120_000_000_000L;
        while (System.nanoTime() < deadline) {
            AccessExecutionGraph g = mc.getExecutionGraph(id).get();
            boolean all = true;
            for (AccessExecutionVertex v : g.getAllExecutionVertices()) {
                all &= v.getExecutionState() == ExecutionState.RUNNING;
            }
            if (all && SlowSink.SUNK.get() > sunk) {
                return;
            }
            if (g.getState().isGloballyTerminalState()) {
                throw new IllegalStateException("job " + id + " ended before running: " + g.getState()
                        + (g.getFailureInfo() != null ? ": " + g.getFailureInfo().getExceptionAsString() : ""));
            }
            Thread.sleep(20);
        }
        throw new IllegalStateException("job " + id + ": no record at the sink 120 s after submission");
    }

    static String json(Settings s, Mode m, CheckpointStats st, double sinkPerSecond) {
        return String.format(Locale.ROOT,
                "{\"engine\":\"flink\",\"flink_version\":\"%s\",\"mode\":\"%s\",\"unaligned\":%b,"
                        + "\"aligned_timeout_ms\":%d,\"debloat\":%b,\"debloat_target_ms\":%d,\"duration_ms\":%d,"
                        + "\"interval_ms\":%d,\"segment_size\":\"%s\",\"parallelism\":%d,\"keys\":%s,"
                        + "\"sink_records_per_s\":%.0f,%s}",
                EnvironmentInformation.getVersion(), m.name(), m.unaligned(), m.timeoutMs(), m.debloat(),
                s.debloatTargetMs(), s.durationMs(), s.intervalMs(), s.segmentSize(), PARALLELISM,
                java.util.Arrays.toString(keys()).replace(" ", ""), sinkPerSecond, st.json());
    }

    private static void deleteTree(Path p) throws java.io.IOException {
        if (!Files.exists(p)) {
            return;
        }
        try (var paths = Files.walk(p)) {
            for (Path x : paths.sorted(java.util.Comparator.reverseOrder()).toList()) {
                Files.deleteIfExists(x);
            }
        }
    }
}
