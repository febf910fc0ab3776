package weir.bench.flink.source;

import org.apache.flink.configuration.ConfigOption;
import org.apache.flink.configuration.ConfigOptions;
import org.apache.flink.table.connector.source.DynamicTableSource;
import org.apache.flink.table.connector.source.LookupTableSource;
import org.apache.flink.table.connector.source.lookup.LookupFunctionProvider;
import org.apache.flink.table.data.GenericRowData;
import org.apache.flink.table.data.RowData;
import org.apache.flink.table.data.StringData;
import org.apache.flink.table.factories.DynamicTableSourceFactory;
import org.apache.flink.table.functions.FunctionContext;
import org.apache.flink.table.functions.LookupFunction;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Collection;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * {@code 'connector' = 'side-input', 'path' = '…'}: q13's side input, a CSV
 * file of "key,value" lines (BIGINT, VARCHAR), as a lookup table loaded
 * whole when the join opens. queries.sql declares the table with the legacy
 * 'connector.type' = 'filesystem' options, which Flink 2 no longer reads,
 * and Flink 2's filesystem source cannot be looked up; bench/nexmark
 * rewrites the table to this connector.
 */
public final class SideInputTableFactory implements DynamicTableSourceFactory {
    static final ConfigOption<String> PATH = ConfigOptions.key("path").stringType().noDefaultValue();
    static final ConfigOption<String> FORMAT = ConfigOptions.key("format").stringType().defaultValue("csv");

    @Override
    public String factoryIdentifier() {
        return "side-input";
    }

    @Override
    public Set<ConfigOption<?>> requiredOptions() {
        return Set.of(PATH);
    }

    @Override
    public Set<ConfigOption<?>> optionalOptions() {
        return Set.of(FORMAT);
    }

    @Override
    public DynamicTableSource createDynamicTableSource(Context context) {
        return new Source(context.getCatalogTable().getOptions().get("path"));
    }

    static final class Source implements LookupTableSource {
        private final String path;

        Source(String path) {
            this.path = path;
        }

        @Override
        public LookupRuntimeProvider getLookupRuntimeProvider(LookupContext context) {
            int[][] keys = context.getKeys();
            if (keys.length != 1 || keys[0].length != 1 || keys[0][0] != 0) {
                throw new IllegalArgumentException("side-input tables are looked up by their first column only");
            }
            return LookupFunctionProvider.of(new Lookup(path));
        }

        @Override
        public DynamicTableSource copy() {
            return new Source(path);
        }

        @Override
        public String asSummaryString() {
            return "SideInput(" + path + ")";
        }
    }

    public static final class Lookup extends LookupFunction {
        private final String path;
        private transient Map<Long, List<RowData>> rows;

        public Lookup(String path) {
            this.path = path;
        }

        @Override
        public void open(FunctionContext context) throws IOException {
            rows = new HashMap<>();
            for (String line : Files.readAllLines(Path.of(path))) {
                int comma = line.indexOf(',');
                if (comma < 0) {
                    continue;
                }
                long key = Long.parseLong(line.substring(0, comma).trim());
                RowData row = GenericRowData.of(key, StringData.fromString(line.substring(comma + 1)));
                rows.computeIfAbsent(key, k -> new java.util.ArrayList<>()).add(row);
            }
        }

        @Override
        public Collection<RowData> lookup(RowData key) {
            return key.isNullAt(0) ? List.of() : rows.getOrDefault(key.getLong(0), List.of());
        }
    }
}
