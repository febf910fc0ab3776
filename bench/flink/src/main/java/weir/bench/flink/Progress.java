package weir.bench.flink;

import java.util.concurrent.atomic.LongAdder;

/**
 * Counters RunQuery samples while a job runs in its MiniCluster (the same
 * JVM): events the Nexmark readers emitted, and the rows the 'weir-count'
 * sink received. Rows is the net count (+I and +U add one, -U and -D take
 * one away): the size of the final result, whatever the batching of the
 * updates; Changes counts every changelog row.
 */
public final class Progress {
    private Progress() {}

    public static final LongAdder EVENTS = new LongAdder();
    public static final LongAdder ROWS = new LongAdder();
    public static final LongAdder CHANGES = new LongAdder();

    /** Resets the counters before a run (RunQuery may run twice in one JVM). */
    public static void reset() {
        EVENTS.reset();
        ROWS.reset();
        CHANGES.reset();
    }
}
