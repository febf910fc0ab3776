package weir.bench.flink;

import org.apache.flink.metrics.Gauge;
import org.apache.flink.metrics.Metric;
import org.apache.flink.metrics.MetricConfig;
import org.apache.flink.metrics.MetricGroup;
import org.apache.flink.metrics.reporter.MetricReporter;
import org.apache.flink.metrics.reporter.MetricReporterFactory;

import java.util.Map;
import java.util.Properties;
import java.util.concurrent.ConcurrentHashMap;

/**
 * A metric reporter that keeps the JobManager's checkpoint gauges
 * (numberOfCompletedCheckpoints, lastCompletedCheckpointId,
 * lastCheckpointDuration, lastCheckpointSize) so that RunQuery can poll
 * them in the same JVM. Configured as
 * {@code metrics.reporter.weir.factory.class: weir.bench.flink.StatsReporter$Factory}
 * (Flink finds the factory through META-INF/services and matches the
 * class name).
 */
public final class StatsReporter implements MetricReporter {
    static final Map<String, Gauge<?>> GAUGES = new ConcurrentHashMap<>();

    /** The value of a checkpoint gauge as a long, or -1 before it exists. */
    static long value(String name) {
        Gauge<?> g = GAUGES.get(name);
        if (g == null) {
            return -1;
        }
        Object v = g.getValue();
        return v instanceof Number ? ((Number) v).longValue() : -1;
    }

    @Override
    public void open(MetricConfig config) {}

    @Override
    public void close() {}

    @Override
    public void notifyOfAddedMetric(Metric metric, String name, MetricGroup group) {
        switch (name) {
            case "numberOfCompletedCheckpoints":
            case "lastCompletedCheckpointId":
            case "lastCheckpointDuration":
            case "lastCheckpointSize":
                if (metric instanceof Gauge) {
                    GAUGES.put(name, (Gauge<?>) metric);
                }
                break;
            default:
        }
    }

    @Override
    public void notifyOfRemovedMetric(Metric metric, String name, MetricGroup group) {}

    /** The factory Flink instantiates from the configuration. */
    public static final class Factory implements MetricReporterFactory {
        @Override
        public MetricReporter createMetricReporter(Properties properties) {
            return new StatsReporter();
        }
    }
}
