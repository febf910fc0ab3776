package weir.bench.flink.sink;

import org.apache.flink.api.connector.sink2.Sink;
import org.apache.flink.api.connector.sink2.SinkWriter;
import org.apache.flink.api.connector.sink2.WriterInitContext;
import org.apache.flink.configuration.ConfigOption;
import org.apache.flink.configuration.ConfigOptions;
import org.apache.flink.table.connector.ChangelogMode;
import org.apache.flink.table.connector.sink.DynamicTableSink;
import org.apache.flink.table.connector.sink.SinkV2Provider;
import org.apache.flink.table.data.RowData;
import org.apache.flink.table.factories.DynamicTableSinkFactory;
import org.apache.flink.table.types.logical.LogicalType;

import java.io.BufferedWriter;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;

/**
 * {@code 'connector' = 'changelog-file', 'path' = '…'}: writes every
 * changelog row (insert, update before/after, delete) in canonical text to
 * path.&lt;subtask&gt;, in arrival order. bench/nexmark's differential check
 * swaps it in for the queries' blackhole sinks; Weir has a sink of the
 * same name and format.
 */
public final class ChangelogFileTableFactory implements DynamicTableSinkFactory {
    static final ConfigOption<String> PATH = ConfigOptions.key("path").stringType().noDefaultValue();

    @Override
    public String factoryIdentifier() {
        return "changelog-file";
    }

    @Override
    public Set<ConfigOption<?>> requiredOptions() {
        return Set.of(PATH);
    }

    @Override
    public Set<ConfigOption<?>> optionalOptions() {
        return Set.of();
    }

    @Override
    public DynamicTableSink createDynamicTableSink(Context context) {
        String path = context.getCatalogTable().getOptions().get("path");
        List<LogicalType> types = new ArrayList<>(
                context.getPhysicalRowDataType().getLogicalType().getChildren());
        return new TableSink(path, types);
    }

    static final class TableSink implements DynamicTableSink {
        private final String path;
        private final List<LogicalType> types;

        TableSink(String path, List<LogicalType> types) {
            this.path = path;
            this.types = types;
        }

        @Override
        public ChangelogMode getChangelogMode(ChangelogMode requested) {
            return ChangelogMode.all();
        }

        @Override
        public SinkRuntimeProvider getSinkRuntimeProvider(Context context) {
            return SinkV2Provider.of(new FileSink(path, types));
        }

        @Override
        public DynamicTableSink copy() {
            return new TableSink(path, types);
        }

        @Override
        public String asSummaryString() {
            return "ChangelogFile(" + path + ")";
        }
    }

    static final class FileSink implements Sink<RowData> {
        private final String path;
        private final ArrayList<LogicalType> types;

        FileSink(String path, List<LogicalType> types) {
            this.path = path;
            this.types = new ArrayList<>(types);
        }

        @Override
        public SinkWriter<RowData> createWriter(WriterInitContext context) throws IOException {
            Path p = Path.of(path + "." + context.getTaskInfo().getIndexOfThisSubtask());
            Files.createDirectories(p.toAbsolutePath().getParent());
            return new Writer(Files.newBufferedWriter(p, StandardCharsets.UTF_8), new Canonical(types));
        }
    }

    static final class Writer implements SinkWriter<RowData> {
        private final BufferedWriter out;
        private final Canonical canonical;

        Writer(BufferedWriter out, Canonical canonical) {
            this.out = out;
            this.canonical = canonical;
        }

        @Override
        public void write(RowData row, Context context) throws IOException {
            out.write(canonical.line(row));
            out.write('\n');
        }

        @Override
        public void flush(boolean endOfInput) throws IOException {
            out.flush();
        }

        @Override
        public void close() throws IOException {
            out.close();
        }
    }
}
