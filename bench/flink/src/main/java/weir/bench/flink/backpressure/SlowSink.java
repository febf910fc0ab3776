package weir.bench.flink.backpressure;

import org.apache.flink.api.connector.sink2.Sink;
import org.apache.flink.api.connector.sink2.SinkWriter;
import org.apache.flink.api.connector.sink2.WriterInitContext;
import org.apache.flink.api.java.tuple.Tuple2;

import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.LockSupport;

/**
 * bench/backpressure's slow sink: each record takes {@code sleepNanos}
 * (parked, as Go's time.Sleep), and is then counted in {@link #SUNK}, which
 * the benchmark reads in the same JVM (the MiniCluster loads this class from
 * the application class path).
 */
public final class SlowSink implements Sink<Tuple2<Long, Long>> {
    private static final long serialVersionUID = 1L;

    /** Records every writer of this JVM took. */
    public static final AtomicLong SUNK = new AtomicLong();

    private final long sleepNanos;

    public SlowSink(long sleepNanos) {
        this.sleepNanos = sleepNanos;
    }

    @Override
    public SinkWriter<Tuple2<Long, Long>> createWriter(WriterInitContext context) {
        return new Writer(sleepNanos);
    }

    static final class Writer implements SinkWriter<Tuple2<Long, Long>> {
        private final long sleepNanos;

        Writer(long sleepNanos) {
            this.sleepNanos = sleepNanos;
        }

        @Override
        public void write(Tuple2<Long, Long> record, Context context) {
            long end = System.nanoTime() + sleepNanos;
            for (long left = sleepNanos; left > 0; left = end - System.nanoTime()) {
                LockSupport.parkNanos(left);
            }
            SUNK.incrementAndGet();
        }

        @Override
        public void flush(boolean endOfInput) {}

        @Override
        public void close() {}
    }
}
