package weir.bench.flink.source;

import org.apache.flink.api.connector.source.ReaderOutput;
import org.apache.flink.api.connector.source.SourceReader;
import org.apache.flink.core.io.InputStatus;
import org.apache.flink.table.data.RowData;

import weir.bench.flink.gen.Generator;
import weir.bench.flink.gen.Model;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;

/**
 * Emits its splits' events round-robin, one per pollNext (as Flink Nexmark's
 * reader does), so its output is in (k, split) order. Rate limiting, when
 * configured, paces each split to its event time from its first poll.
 */
final class NexmarkSourceReader implements SourceReader<RowData, NexmarkSplit> {
    private static final class Cursor {
        final int index;
        long next;
        long startMs = -1; // wall clock of event time baseTime (rate limited only)

        Cursor(int index, long next) {
            this.index = index;
            this.next = next;
        }
    }

    private final Generator gen;
    private final List<Cursor> cursors = new ArrayList<>();
    private int cur;
    private boolean noMoreSplits;
    private CompletableFuture<Void> available = new CompletableFuture<>();

    NexmarkSourceReader(Generator gen) {
        this.gen = gen;
    }

    @Override
    public void start() {}

    @Override
    public InputStatus pollNext(ReaderOutput<RowData> output) throws Exception {
        long now = gen.config().rateLimited ? System.currentTimeMillis() : 0;
        for (int tried = 0; tried < cursors.size(); tried++) {
            Cursor c = cursors.get(cur);
            cur = (cur + 1) % cursors.size();
            if (c.next >= gen.splitLen(c.index) || (gen.config().rateLimited && !due(c, now))) {
                continue;
            }
            Model.Event e = gen.event(c.index, c.next);
            output.collect(Rows.of(e), gen.timestamp(c.next));
            c.next++;
            weir.bench.flink.Progress.EVENTS.increment();
            return InputStatus.MORE_AVAILABLE;
        }
        if (finished()) {
            if (noMoreSplits) {
                return InputStatus.END_OF_INPUT;
            }
            available = new CompletableFuture<>();
            return InputStatus.NOTHING_AVAILABLE;
        }
        // Rate limited and nothing due yet: wake when the earliest event is.
        long wake = Long.MAX_VALUE;
        for (Cursor c : cursors) {
            if (c.next < gen.splitLen(c.index)) {
                wake = Math.min(wake, c.startMs + gen.timestamp(c.next) - gen.config().baseTime);
            }
        }
        available = new CompletableFuture<>();
        CompletableFuture<Void> f = available;
        CompletableFuture.delayedExecutor(Math.max(wake - now, 0), java.util.concurrent.TimeUnit.MILLISECONDS)
                .execute(() -> f.complete(null));
        return InputStatus.NOTHING_AVAILABLE;
    }

    private boolean due(Cursor c, long now) {
        long sinceBase = gen.timestamp(c.next) - gen.config().baseTime;
        if (c.startMs < 0) {
            c.startMs = now - sinceBase;
        }
        return now >= c.startMs + sinceBase;
    }

    private boolean finished() {
        for (Cursor c : cursors) {
            if (c.next < gen.splitLen(c.index)) {
                return false;
            }
        }
        return true;
    }

    @Override
    public List<NexmarkSplit> snapshotState(long checkpointId) {
        List<NexmarkSplit> out = new ArrayList<>(cursors.size());
        for (Cursor c : cursors) {
            out.add(new NexmarkSplit(c.index, c.next));
        }
        return out;
    }

    @Override
    public CompletableFuture<Void> isAvailable() {
        return available;
    }

    @Override
    public void addSplits(List<NexmarkSplit> splits) {
        for (NexmarkSplit s : splits) {
            cursors.add(new Cursor(s.index, s.next));
        }
        available.complete(null);
    }

    @Override
    public void notifyNoMoreSplits() {
        noMoreSplits = true;
        available.complete(null);
    }

    @Override
    public void close() {}
}
