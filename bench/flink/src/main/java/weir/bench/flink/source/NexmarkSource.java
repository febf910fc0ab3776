package weir.bench.flink.source;

import org.apache.flink.api.connector.source.Boundedness;
import org.apache.flink.api.connector.source.Source;
import org.apache.flink.api.connector.source.SourceReader;
import org.apache.flink.api.connector.source.SourceReaderContext;
import org.apache.flink.api.connector.source.SplitEnumerator;
import org.apache.flink.api.connector.source.SplitEnumeratorContext;
import org.apache.flink.core.io.SimpleVersionedSerializer;
import org.apache.flink.table.data.RowData;

import weir.bench.flink.gen.Generator;
import weir.bench.flink.gen.NexmarkConfig;

import java.util.ArrayList;
import java.util.List;

/** The generator as a FLIP-27 source of nexmark rows, with the generator's splits (8 by default). */
public final class NexmarkSource implements Source<RowData, NexmarkSplit, List<NexmarkSplit>> {
    private static final long serialVersionUID = 1L;

    private final NexmarkConfig cfg;

    public NexmarkSource(NexmarkConfig cfg) {
        cfg.validate();
        this.cfg = cfg;
    }

    @Override
    public Boundedness getBoundedness() {
        return cfg.eventsNum > 0 ? Boundedness.BOUNDED : Boundedness.CONTINUOUS_UNBOUNDED;
    }

    @Override
    public SplitEnumerator<NexmarkSplit, List<NexmarkSplit>> createEnumerator(SplitEnumeratorContext<NexmarkSplit> ctx) {
        List<NexmarkSplit> all = new ArrayList<>();
        for (int i = 0; i < cfg.splits; i++) {
            all.add(new NexmarkSplit(i, 0));
        }
        return new NexmarkEnumerator(ctx, all, cfg.eventsNum > 0);
    }

    @Override
    public SplitEnumerator<NexmarkSplit, List<NexmarkSplit>> restoreEnumerator(
            SplitEnumeratorContext<NexmarkSplit> ctx, List<NexmarkSplit> pending) {
        return new NexmarkEnumerator(ctx, pending, cfg.eventsNum > 0);
    }

    @Override
    public SimpleVersionedSerializer<NexmarkSplit> getSplitSerializer() {
        return new NexmarkSplit.Serializer();
    }

    @Override
    public SimpleVersionedSerializer<List<NexmarkSplit>> getEnumeratorCheckpointSerializer() {
        return new NexmarkSplit.ListSerializer();
    }

    @Override
    public SourceReader<RowData, NexmarkSplit> createReader(SourceReaderContext ctx) {
        return new NexmarkSourceReader(new Generator(cfg));
    }
}
