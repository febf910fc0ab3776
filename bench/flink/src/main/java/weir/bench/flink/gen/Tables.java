package weir.bench.flink.gen;

/** What Nexmark makes once per JVM, from fixed seeds (strings.go's tables). */
final class Tables {
    static final int TEXT_LEN = 1 << 20;
    static final int NUM_CHANNELS = 10000;
    private static final long SEED_TEXT = 0x7465787400000000L;
    private static final long SEED_HOT_URL = 0x686f747500000000L;
    private static final long SEED_CHANNEL = 0x6368616e00000000L;

    static final String[] HOT_CHANNELS = {"Google", "Facebook", "Baidu", "Apple"};
    static final String[] FIRST_NAMES = {"Peter", "Paul", "Luke", "John", "Saul", "Vicky", "Kate", "Julie", "Sarah", "Deiter", "Walter"};
    static final String[] LAST_NAMES = {"Shultz", "Abrams", "Spencer", "White", "Bartels", "Walton", "Smith", "Jones", "Noris"};
    static final String[] CITIES = {"Phoenix", "Los Angeles", "San Francisco", "Boise", "Portland", "Bend", "Redmond", "Seattle", "Kent", "Cheyenne"};
    static final String[] STATES = {"AZ", "CA", "ID", "OR", "WA", "WY"};

    static final String TEXT;
    static final String[] HOT_URLS = new String[4];
    static final String[] CHANNEL_NAMES = new String[NUM_CHANNELS];
    static final String[] CHANNEL_URLS = new String[NUM_CHANNELS];

    static {
        SplitMix r = new SplitMix(SEED_TEXT);
        char[] b = new char[TEXT_LEN];
        for (int i = 0; i < TEXT_LEN; i++) {
            b[i] = (char) ('a' + r.intn(26));
        }
        TEXT = new String(b);
        for (int i = 0; i < HOT_URLS.length; i++) {
            HOT_URLS[i] = baseUrl(new SplitMix(SEED_HOT_URL + i));
        }
        for (int c = 0; c < NUM_CHANNELS; c++) {
            SplitMix cr = new SplitMix(SEED_CHANNEL + c);
            String url = baseUrl(cr);
            if (cr.intn(10) > 0) {
                url += "&channel_id=" + Math.abs(Integer.reverse(c));
            }
            CHANNEL_NAMES[c] = "channel-" + c;
            CHANNEL_URLS[c] = url;
        }
    }

    private Tables() {}

    private static String baseUrl(SplitMix r) {
        return "https://www.nexmark.com/" + r.str(5, '_') + "/" + r.str(5, '_') + "/" + r.str(5, '_') + "/item.htm?query=1";
    }
}
