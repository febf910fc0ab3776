package weir.bench.flink.backpressure;

import org.apache.flink.api.connector.source.Boundedness;
import org.apache.flink.api.connector.source.ReaderOutput;
import org.apache.flink.api.connector.source.Source;
import org.apache.flink.api.connector.source.SourceReader;
import org.apache.flink.api.connector.source.SourceReaderContext;
import org.apache.flink.api.connector.source.SourceSplit;
import org.apache.flink.api.connector.source.SplitEnumerator;
import org.apache.flink.api.connector.source.SplitEnumeratorContext;
import org.apache.flink.api.java.tuple.Tuple2;
import org.apache.flink.core.io.InputStatus;
import org.apache.flink.core.io.SimpleVersionedSerializer;

import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.DataInputStream;
import java.io.DataOutputStream;
import java.io.IOException;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

/**
 * The source of bench/backpressure's job, shaped as Weir's internal/sim
 * SeqSource there: split i emits the gap-free sequence of one key (key
 * {@code keys[i]}, as SeqSource's split i emits its first key while that key
 * has elements left, and the benchmark gives each key 2^30), split i goes to
 * reader i mod parallelism, and a reader emits {@code burst} records per poll
 * and then waits {@code pauseMillis}. Records are (key, seq) as two longs, Go's
 * int. Unbounded (the benchmark cancels the job); a split's position, the next
 * seq, is its checkpointed state.
 */
public final class BurstSource implements Source<Tuple2<Long, Long>, BurstSource.Split, List<BurstSource.Split>> {
    private static final long serialVersionUID = 1L;

    private final long[] keys;
    private final int burst;
    private final long pauseMillis;

    public BurstSource(long[] keys, int burst, long pauseMillis) {
        this.keys = keys.clone();
        this.burst = burst;
        this.pauseMillis = pauseMillis;
    }

    @Override
    public Boundedness getBoundedness() {
        return Boundedness.CONTINUOUS_UNBOUNDED;
    }

    @Override
    public SplitEnumerator<Split, List<Split>> createEnumerator(SplitEnumeratorContext<Split> ctx) {
        List<Split> all = new ArrayList<>();
        for (int i = 0; i < keys.length; i++) {
            all.add(new Split(i, keys[i], 0));
        }
        return new Enumerator(ctx, all);
    }

    @Override
    public SplitEnumerator<Split, List<Split>> restoreEnumerator(SplitEnumeratorContext<Split> ctx, List<Split> pending) {
        return new Enumerator(ctx, pending);
    }

    @Override
    public SimpleVersionedSerializer<Split> getSplitSerializer() {
        return new SplitSerializer();
    }

    @Override
    public SimpleVersionedSerializer<List<Split>> getEnumeratorCheckpointSerializer() {
        return new ListSerializer();
    }

    @Override
    public SourceReader<Tuple2<Long, Long>, Split> createReader(SourceReaderContext ctx) {
        return new Reader(burst, pauseMillis);
    }

    /** Split index, its key and the next seq to emit. */
    public static final class Split implements SourceSplit {
        final int index;
        final long key;
        final long next;

        Split(int index, long key, long next) {
            this.index = index;
            this.key = key;
            this.next = next;
        }

        @Override
        public String splitId() {
            return Integer.toString(index);
        }

        void write(DataOutputStream out) throws IOException {
            out.writeInt(index);
            out.writeLong(key);
            out.writeLong(next);
        }

        static Split read(DataInputStream in) throws IOException {
            return new Split(in.readInt(), in.readLong(), in.readLong());
        }
    }

    /** Gives split i to reader i mod parallelism when that reader registers. */
    static final class Enumerator implements SplitEnumerator<Split, List<Split>> {
        private final SplitEnumeratorContext<Split> context;
        private final List<Split> pending;

        Enumerator(SplitEnumeratorContext<Split> context, List<Split> pending) {
            this.context = context;
            this.pending = new ArrayList<>(pending);
        }

        @Override
        public void start() {}

        @Override
        public void handleSplitRequest(int subtask, String host) {}

        @Override
        public void addSplitsBack(List<Split> splits, int subtask) {
            pending.addAll(splits);
        }

        @Override
        public void addReader(int subtask) {
            int n = context.currentParallelism();
            for (Iterator<Split> it = pending.iterator(); it.hasNext(); ) {
                Split s = it.next();
                if (s.index % n == subtask) {
                    context.assignSplit(s, subtask);
                    it.remove();
                }
            }
        }

        @Override
        public List<Split> snapshotState(long checkpointId) {
            return new ArrayList<>(pending);
        }

        @Override
        public void close() {}
    }

    /** Emits burst records round-robin over its splits per poll, then waits the pause. */
    static final class Reader implements SourceReader<Tuple2<Long, Long>, Split> {
        private final int burst;
        private final long pauseMillis;
        private final List<long[]> splits = new ArrayList<>(); // {index, key, next}
        private int cur;
        private CompletableFuture<Void> available = new CompletableFuture<>();

        Reader(int burst, long pauseMillis) {
            this.burst = burst;
            this.pauseMillis = pauseMillis;
        }

        @Override
        public void start() {}

        @Override
        public InputStatus pollNext(ReaderOutput<Tuple2<Long, Long>> output) {
            if (splits.isEmpty()) {
                available = new CompletableFuture<>();
                return InputStatus.NOTHING_AVAILABLE;
            }
            for (int i = 0; i < burst; i++) {
                long[] s = splits.get(cur);
                cur = (cur + 1) % splits.size();
                output.collect(Tuple2.of(s[1], s[2]));
                s[2]++;
            }
            CompletableFuture<Void> f = new CompletableFuture<>();
            available = f;
            CompletableFuture.delayedExecutor(pauseMillis, TimeUnit.MILLISECONDS).execute(() -> f.complete(null));
            return InputStatus.NOTHING_AVAILABLE;
        }

        @Override
        public List<Split> snapshotState(long checkpointId) {
            List<Split> out = new ArrayList<>(splits.size());
            for (long[] s : splits) {
                out.add(new Split((int) s[0], s[1], s[2]));
            }
            return out;
        }

        @Override
        public CompletableFuture<Void> isAvailable() {
            return available;
        }

        @Override
        public void addSplits(List<Split> added) {
            for (Split s : added) {
                splits.add(new long[] {s.index, s.key, s.next});
            }
            available.complete(null);
        }

        @Override
        public void notifyNoMoreSplits() {}

        @Override
        public void close() {}
    }

    static final class SplitSerializer implements SimpleVersionedSerializer<Split> {
        @Override
        public int getVersion() {
            return 1;
        }

        @Override
        public byte[] serialize(Split s) throws IOException {
            ByteArrayOutputStream bytes = new ByteArrayOutputStream();
            DataOutputStream out = new DataOutputStream(bytes);
            s.write(out);
            out.flush();
            return bytes.toByteArray();
        }

        @Override
        public Split deserialize(int version, byte[] b) throws IOException {
            return Split.read(new DataInputStream(new ByteArrayInputStream(b)));
        }
    }

    static final class ListSerializer implements SimpleVersionedSerializer<List<Split>> {
        @Override
        public int getVersion() {
            return 1;
        }

        @Override
        public byte[] serialize(List<Split> splits) throws IOException {
            ByteArrayOutputStream bytes = new ByteArrayOutputStream();
            DataOutputStream out = new DataOutputStream(bytes);
            out.writeInt(splits.size());
            for (Split s : splits) {
                s.write(out);
            }
            out.flush();
            return bytes.toByteArray();
        }

        @Override
        public List<Split> deserialize(int version, byte[] b) throws IOException {
            DataInputStream in = new DataInputStream(new ByteArrayInputStream(b));
            int n = in.readInt();
            List<Split> out = new ArrayList<>(n);
            for (int i = 0; i < n; i++) {
                out.add(Split.read(in));
            }
            return out;
        }
    }
}
