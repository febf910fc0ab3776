package weir.bench.flink.sink;

import org.apache.flink.api.connector.sink2.Sink;
import org.apache.flink.api.connector.sink2.SinkWriter;
import org.apache.flink.api.connector.sink2.WriterInitContext;
import org.apache.flink.configuration.ConfigOption;
import org.apache.flink.table.connector.ChangelogMode;
import org.apache.flink.table.connector.sink.DynamicTableSink;
import org.apache.flink.table.connector.sink.SinkV2Provider;
import org.apache.flink.table.data.RowData;
import org.apache.flink.table.factories.DynamicTableSinkFactory;
import org.apache.flink.types.RowKind;

import weir.bench.flink.Progress;

import java.util.Set;

/**
 * {@code 'connector' = 'weir-count'}: a blackhole that counts. RunQuery
 * swaps it in for the queries' blackhole sinks so that the benchmark can
 * compare the number of result rows of both engines (Progress.ROWS: +I and
 * +U add one, -U and -D take one away). Each writer adds its counts when
 * it flushes.
 */
public final class CountTableFactory implements DynamicTableSinkFactory {
    @Override
    public String factoryIdentifier() {
        return "weir-count";
    }

    @Override
    public Set<ConfigOption<?>> requiredOptions() {
        return Set.of();
    }

    @Override
    public Set<ConfigOption<?>> optionalOptions() {
        return Set.of();
    }

    @Override
    public DynamicTableSink createDynamicTableSink(Context context) {
        return new TableSink();
    }

    static final class TableSink implements DynamicTableSink {
        @Override
        public ChangelogMode getChangelogMode(ChangelogMode requested) {
            return ChangelogMode.all();
        }

        @Override
        public SinkRuntimeProvider getSinkRuntimeProvider(Context context) {
            return SinkV2Provider.of(new CountSink());
        }

        @Override
        public DynamicTableSink copy() {
            return new TableSink();
        }

        @Override
        public String asSummaryString() {
            return "WeirCount";
        }
    }

    static final class CountSink implements Sink<RowData> {
        @Override
        public SinkWriter<RowData> createWriter(WriterInitContext context) {
            return new Writer();
        }
    }

    static final class Writer implements SinkWriter<RowData> {
        private long rows;
        private long changes;

        @Override
        public void write(RowData row, Context context) {
            RowKind k = row.getRowKind();
            rows += (k == RowKind.INSERT || k == RowKind.UPDATE_AFTER) ? 1 : -1;
            changes++;
        }

        @Override
        public void flush(boolean endOfInput) {
            Progress.ROWS.add(rows);
            Progress.CHANGES.add(changes);
            rows = 0;
            changes = 0;
        }

        @Override
        public void close() {
            flush(true);
        }
    }
}
