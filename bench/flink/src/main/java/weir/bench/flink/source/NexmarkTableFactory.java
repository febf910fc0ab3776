package weir.bench.flink.source;

import org.apache.flink.configuration.ConfigOption;
import org.apache.flink.configuration.ConfigOptions;
import org.apache.flink.table.connector.ChangelogMode;
import org.apache.flink.table.connector.source.DynamicTableSource;
import org.apache.flink.table.connector.source.ScanTableSource;
import org.apache.flink.table.connector.source.SourceProvider;
import org.apache.flink.table.factories.DynamicTableSourceFactory;

import weir.bench.flink.gen.NexmarkConfig;

import java.util.HashSet;
import java.util.Set;

/**
 * {@code 'connector' = 'nexmark'}: Weir's seeded generator as a table source
 * with Flink Nexmark's option names (NexmarkConfig reads and checks them).
 */
public final class NexmarkTableFactory implements DynamicTableSourceFactory {
    private static final String[] OPTIONS = {
        "events.num", "first-event.rate", "tps", "rate", "next-event.rate", "person.proportion", "auction.proportion",
        "bid.proportion", "person.avg-size", "auction.avg-size", "bid.avg-size", "bid.hot-ratio.auctions",
        "bid.hot-ratio.bidders", "auction.hot-ratio.sellers", "num-in-flight-auctions", "num-active-people", "splits",
        "base-time", "rate.limited", "max-emit-speed", "rate.shape", "rate.period",
    };

    @Override
    public String factoryIdentifier() {
        return "nexmark";
    }

    @Override
    public Set<ConfigOption<?>> requiredOptions() {
        return new HashSet<>();
    }

    @Override
    public Set<ConfigOption<?>> optionalOptions() {
        Set<ConfigOption<?>> out = new HashSet<>();
        for (String k : OPTIONS) {
            out.add(ConfigOptions.key(k).stringType().noDefaultValue());
        }
        return out;
    }

    @Override
    public DynamicTableSource createDynamicTableSource(Context context) {
        return new TableSource(NexmarkConfig.fromOptions(context.getCatalogTable().getOptions()));
    }

    static final class TableSource implements ScanTableSource {
        private final NexmarkConfig cfg;

        TableSource(NexmarkConfig cfg) {
            this.cfg = cfg;
        }

        @Override
        public ChangelogMode getChangelogMode() {
            return ChangelogMode.insertOnly();
        }

        @Override
        public ScanRuntimeProvider getScanRuntimeProvider(ScanContext context) {
            return SourceProvider.of(new NexmarkSource(cfg));
        }

        @Override
        public DynamicTableSource copy() {
            return new TableSource(cfg);
        }

        @Override
        public String asSummaryString() {
            return "Nexmark(" + cfg + ")";
        }
    }
}
