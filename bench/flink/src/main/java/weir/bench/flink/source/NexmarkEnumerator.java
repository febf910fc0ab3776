package weir.bench.flink.source;

import org.apache.flink.api.connector.source.SplitEnumerator;
import org.apache.flink.api.connector.source.SplitEnumeratorContext;

import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;

/**
 * Gives split i to reader i mod parallelism when that reader registers, then
 * tells it there are no more (bounded streams), like Weir's AssignSplit.
 */
final class NexmarkEnumerator implements SplitEnumerator<NexmarkSplit, List<NexmarkSplit>> {
    private final SplitEnumeratorContext<NexmarkSplit> context;
    private final List<NexmarkSplit> pending;
    private final boolean bounded;

    NexmarkEnumerator(SplitEnumeratorContext<NexmarkSplit> context, List<NexmarkSplit> pending, boolean bounded) {
        this.context = context;
        this.pending = new ArrayList<>(pending);
        this.bounded = bounded;
    }

    @Override
    public void start() {}

    @Override
    public void handleSplitRequest(int subtask, String host) {}

    @Override
    public void addSplitsBack(List<NexmarkSplit> splits, int subtask) {
        pending.addAll(splits);
    }

    @Override
    public void addReader(int subtask) {
        int n = context.currentParallelism();
        for (Iterator<NexmarkSplit> it = pending.iterator(); it.hasNext(); ) {
            NexmarkSplit s = it.next();
            if (s.index % n == subtask) {
                context.assignSplit(s, subtask);
                it.remove();
            }
        }
        if (bounded) {
            context.signalNoMoreSplits(subtask);
        }
    }

    @Override
    public List<NexmarkSplit> snapshotState(long checkpointId) {
        return new ArrayList<>(pending);
    }

    @Override
    public void close() {}
}
