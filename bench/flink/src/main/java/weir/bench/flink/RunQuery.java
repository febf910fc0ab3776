package weir.bench.flink;

import org.apache.flink.configuration.Configuration;
import org.apache.flink.runtime.util.EnvironmentInformation;
import org.apache.flink.streaming.api.environment.StreamExecutionEnvironment;
import org.apache.flink.table.api.TableResult;
import org.apache.flink.table.api.bridge.java.StreamTableEnvironment;

import java.io.IOException;
import java.lang.management.ManagementFactory;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/**
 * Runs one Nexmark query on a local MiniCluster (heap state backend) from
 * the weir generator table 'nexmark' into the query's blackhole sink, and
 * prints one JSON line: events, wall and CPU seconds of the job (from
 * submission to end; planning is reported apart), and the process's peak RSS.
 *
 * <pre>
 * RunQuery --query q0 --events 1000000 [--checkpoint-interval 0] [--parallelism 2]
 *          [--tps 10000000] [--warmup-events 0] [--queries path/to/queries.sql]
 *          [--script path/to/script.sql]
 * </pre>
 *
 * <p>With {@code --script}, the statements come from that file (bench/nexmark
 * writes it: the source table, the views and the query, placeholders already
 * substituted, the INSERT last) instead of queries.sql; --query then only
 * names the run. --tps and the warm-up run do not apply to a script.
 */
public final class RunQuery {
    private RunQuery() {}

    public static void main(String[] args) throws Exception {
        Map<String, String> a = new HashMap<>(Map.of(
                "--query", "q0", "--events", "1000000", "--checkpoint-interval", "0", "--parallelism", "2",
                "--tps", "10000000", "--warmup-events", "0"));
        a.put("--state-backend", "hashmap");
        a.put("--incremental", "false");
        a.put("--sample-ms", "5000");
        for (int i = 0; i < args.length; i++) {
            boolean known = a.containsKey(args[i]) || args[i].equals("--queries") || args[i].equals("--script");
            if (!known || i + 1 == args.length) {
                throw new IllegalArgumentException("unknown argument or missing value: " + args[i]);
            }
            a.put(args[i], args[++i]);
        }
        Queries queries = a.containsKey("--script") ? null : Queries.load(a.get("--queries"));
        String script = a.containsKey("--script") ? Files.readString(Path.of(a.get("--script"))) : null;
        String q = a.get("--query");
        long warmup = Long.parseLong(a.get("--warmup-events"));
        int parallelism = Integer.parseInt(a.get("--parallelism"));
        long interval = Long.parseLong(a.get("--checkpoint-interval"));
        Settings st = new Settings(parallelism, interval, a.get("--tps"), a.get("--state-backend"),
                Boolean.parseBoolean(a.get("--incremental")), Long.parseLong(a.get("--sample-ms")));
        if (warmup > 0 && script == null) {
            run(queries, script, q, warmup, st);
        }
        long events = Long.parseLong(a.get("--events"));
        Sampler s = run(queries, script, q, events, st);
        double[] m = s.totals;
        System.out.println(String.format(Locale.ROOT,
                "{\"engine\":\"flink\",\"flink_version\":\"%s\",\"query\":\"%s\",\"events\":%d,\"parallelism\":%d,"
                        + "\"checkpoint_interval_ms\":%d,\"wall_seconds\":%.3f,\"cpu_seconds\":%.3f,\"cores\":%.2f,"
                        + "\"events_per_core_second\":%.0f,\"peak_rss_bytes\":%d,\"plan_seconds\":%.3f,\"warmup_events\":%d,"
                        + "\"state_backend\":\"%s\",\"incremental\":%b,\"max_heap_bytes\":%d,%s}",
                EnvironmentInformation.getVersion(), q, events, parallelism, interval, m[0], m[1], m[1] / m[0],
                events / m[1], peakRss(), m[2], warmup, st.backend, st.incremental, Runtime.getRuntime().maxMemory(),
                s.json()));
        System.exit(0); // MiniCluster threads may linger
    }

    /** How every run of this process is configured. */
    record Settings(int parallelism, long interval, String tps, String backend, boolean incremental, long sampleMs) {}

    /** Runs the query once; the sampler holds {wall s, cpu s, planning s} and the samples. */
    private static Sampler run(Queries queries, String script, String q, long events, Settings st)
            throws Exception {
        int parallelism = st.parallelism();
        long interval = st.interval();
        String tps = st.tps();
        Path tmp = Files.createTempDirectory("weir-flink-nexmark");
        Configuration conf = new Configuration();
        conf.setString("parallelism.default", Integer.toString(parallelism));
        conf.setString("state.backend.type", st.backend());
        conf.setString("execution.checkpointing.incremental", Boolean.toString(st.incremental()));
        if (st.backend().equals("rocksdb")) {
            conf.setString("state.backend.rocksdb.localdir", tmp.resolve("rocksdb").toString());
        }
        conf.setString("metrics.reporter.weir.factory.class", StatsReporter.Factory.class.getName());
        if (interval > 0) {
            conf.setString("execution.checkpointing.interval", interval + " ms");
            conf.setString("execution.checkpointing.mode", "EXACTLY_ONCE");
            conf.setString("execution.checkpointing.storage", "filesystem");
            conf.setString("execution.checkpointing.dir", tmp.resolve("checkpoints").toUri().toString());
        }
        // Nexmark's own settings (nexmark-flink conf/config_v2.yaml).
        conf.setString("table.exec.mini-batch.enabled", "true");
        conf.setString("table.exec.mini-batch.allow-latency", "2s");
        conf.setString("table.exec.mini-batch.size", "50000");
        conf.setString("table.optimizer.distinct-agg.split.enabled", "true");
        conf.setString("execution.checkpointing.checkpoints-after-tasks-finish.enabled", "false");
        StreamExecutionEnvironment env = StreamExecutionEnvironment.createLocalEnvironment(parallelism, conf);
        StreamTableEnvironment tEnv = StreamTableEnvironment.create(env);

        List<String> stmts = new java.util.ArrayList<>(
                script != null ? Queries.split(script) : queryStatements(queries, q, events, tmp, tps, tEnv));
        // Count the result rows: every blackhole sink becomes bench/flink's counting one.
        stmts.replaceAll(x -> x.replaceAll("'connector'\\s*=\\s*'blackhole'", "'connector' = 'weir-count'"));
        for (String s : stmts.subList(0, stmts.size() - 1)) {
            tEnv.executeSql(s);
        }
        com.sun.management.OperatingSystemMXBean os =
                (com.sun.management.OperatingSystemMXBean) ManagementFactory.getOperatingSystemMXBean();
        Progress.reset();
        long t0 = System.nanoTime();
        TableResult result = tEnv.executeSql(stmts.get(stmts.size() - 1)); // the INSERT: submits the job
        long t1 = System.nanoTime();
        long cpu1 = os.getProcessCpuTime();
        Sampler s = new Sampler(os, t1, cpu1, st.sampleMs());
        s.start();
        result.await();
        long t2 = System.nanoTime();
        long cpu2 = os.getProcessCpuTime();
        s.finish(t2, cpu2);
        s.totals = new double[] {(t2 - t1) / 1e9, (cpu2 - cpu1) / 1e9, (t1 - t0) / 1e9};
        return s;
    }

    /** Runs the DDL and views of queries.sql and returns query q's statements. */
    private static List<String> queryStatements(Queries queries, String q, long events, Path tmp, String tps,
            StreamTableEnvironment tEnv) {
        Map<String, String> vars = new HashMap<>();
        vars.put("TPS", tps);
        vars.put("EVENTS_NUM", Long.toString(events));
        vars.put("PERSON_PROPORTION", "1");
        vars.put("AUCTION_PROPORTION", "3");
        vars.put("BID_PROPORTION", "46");
        vars.put("NEXMARK_TABLE", "nexmark");
        vars.put("NEXMARK_DIR", tmp.toString());
        vars.put("FLINK_HOME", tmp.toString());
        vars.put("SUBMIT_TIME", Long.toString(System.currentTimeMillis()));
        for (String s : queries.statements("ddl", vars)) {
            tEnv.executeSql(s.replaceFirst("CREATE TABLE datagen", "CREATE TABLE nexmark"));
        }
        for (String s : queries.statements("views", vars)) {
            tEnv.executeSql(s);
        }
        return queries.statements(q, vars);
    }

    /** VmHWM from /proc/self/status, in bytes (-1 where there is none). */
    private static long peakRss() throws IOException {
        Path p = Path.of("/proc/self/status");
        if (!Files.exists(p)) {
            return -1;
        }
        for (String line : Files.readAllLines(p)) {
            if (line.startsWith("VmHWM:")) {
                return Long.parseLong(line.replaceAll("[^0-9]", "")) * 1024;
            }
        }
        return -1;
    }
}
