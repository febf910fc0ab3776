package weir.bench.flink.gen;

import java.io.Serializable;
import java.time.Instant;
import java.util.Map;
import java.util.TreeMap;

/**
 * The generator's configuration: the Java twin of Config in
 * connector/nexmark/options.go, with the same option names and defaults.
 */
public final class NexmarkConfig implements Serializable {
    private static final long serialVersionUID = 1L;

    /** 2024-01-01T00:00:00Z, Go's DefaultBaseTime. */
    public static final long DEFAULT_BASE_TIME = 1704067200000L;

    public long eventsNum = 0; // 0: unbounded
    public int firstEventRate = 10000;
    public int nextEventRate = 0; // 0: firstEventRate
    public int personProportion = 1;
    public int auctionProportion = 3;
    public int bidProportion = 46;
    public int avgPersonSize = 200;
    public int avgAuctionSize = 500;
    public int avgBidSize = 100;
    public int hotAuctionRatio = 2;
    public int hotBiddersRatio = 4;
    public int hotSellersRatio = 4;
    public int numInFlightAuctions = 100;
    public int numActivePeople = 1000;
    public int splits = 8;
    public long baseTime = DEFAULT_BASE_TIME;
    public boolean rateLimited = false;

    /** Reads a 'connector' = 'nexmark' table's WITH options; unknown ones are an error. */
    public static NexmarkConfig fromOptions(Map<String, String> options) {
        NexmarkConfig c = new NexmarkConfig();
        for (Map.Entry<String, String> e : new TreeMap<>(options).entrySet()) {
            String k = e.getKey();
            String v = e.getValue().trim();
            try {
                c.set(k, v);
            } catch (NumberFormatException ex) {
                throw new IllegalArgumentException("nexmark: option '" + k + "' = '" + v + "': not a number", ex);
            }
        }
        c.validate();
        return c;
    }

    private void set(String k, String v) {
        switch (k) {
            case "connector":
                if (!v.equals("nexmark")) {
                    throw new IllegalArgumentException("nexmark: connector '" + v + "' is not nexmark");
                }
                break;
            case "events.num": eventsNum = Long.parseLong(v); break;
            case "first-event.rate": case "tps": case "rate": firstEventRate = Integer.parseInt(v); break;
            case "next-event.rate": nextEventRate = Integer.parseInt(v); break;
            case "person.proportion": personProportion = Integer.parseInt(v); break;
            case "auction.proportion": auctionProportion = Integer.parseInt(v); break;
            case "bid.proportion": bidProportion = Integer.parseInt(v); break;
            case "person.avg-size": avgPersonSize = parseSize(v); break;
            case "auction.avg-size": avgAuctionSize = parseSize(v); break;
            case "bid.avg-size": avgBidSize = parseSize(v); break;
            case "bid.hot-ratio.auctions": hotAuctionRatio = Integer.parseInt(v); break;
            case "bid.hot-ratio.bidders": hotBiddersRatio = Integer.parseInt(v); break;
            case "auction.hot-ratio.sellers": hotSellersRatio = Integer.parseInt(v); break;
            case "num-in-flight-auctions": numInFlightAuctions = Integer.parseInt(v); break;
            case "num-active-people": numActivePeople = Integer.parseInt(v); break;
            case "splits": splits = Integer.parseInt(v); break;
            case "base-time": baseTime = parseTime(v); break;
            case "rate.limited": rateLimited |= Boolean.parseBoolean(v); break;
            case "max-emit-speed": rateLimited |= !Boolean.parseBoolean(v); break;
            case "rate.shape": case "rate.period": break; // accepted, unused (as in Flink's generator)
            default:
                throw new IllegalArgumentException("nexmark: unsupported option '" + k + "'");
        }
    }

    private static int parseSize(String v) {
        String s = v.toLowerCase();
        int mult = 1;
        String[][] units = {{"kb", "1024"}, {"mb", "1048576"}, {"k", "1024"}, {"m", "1048576"}, {"bytes", "1"}, {"b", "1"}};
        for (String[] u : units) {
            if (s.endsWith(u[0])) {
                s = s.substring(0, s.length() - u[0].length()).trim();
                mult = Integer.parseInt(u[1]);
                break;
            }
        }
        return Integer.parseInt(s) * mult;
    }

    private static long parseTime(String v) {
        try {
            return Long.parseLong(v);
        } catch (NumberFormatException e) {
            return Instant.parse(v).toEpochMilli();
        }
    }

    public int nextEventRateOrDefault() {
        return nextEventRate == 0 ? firstEventRate : nextEventRate;
    }

    public void validate() {
        if (eventsNum < 0 || firstEventRate <= 0 || nextEventRateOrDefault() != firstEventRate
                || personProportion <= 0 || auctionProportion <= 0 || bidProportion <= 0
                || splits < 1 || splits > 1024 || (eventsNum > 0 && eventsNum < splits)
                || avgPersonSize <= 0 || avgAuctionSize <= 0 || avgBidSize <= 0
                || Math.max(avgPersonSize, Math.max(avgAuctionSize, avgBidSize)) > Tables.TEXT_LEN / 2
                || hotAuctionRatio <= 0 || hotBiddersRatio <= 0 || hotSellersRatio <= 0
                || numInFlightAuctions <= 0 || numActivePeople <= 0) {
            throw new IllegalArgumentException("nexmark: invalid configuration " + this);
        }
    }

    @Override
    public String toString() {
        return "NexmarkConfig{events.num=" + eventsNum + ", first-event.rate=" + firstEventRate
                + ", proportions=" + personProportion + ":" + auctionProportion + ":" + bidProportion
                + ", avg sizes=" + avgPersonSize + "/" + avgAuctionSize + "/" + avgBidSize
                + ", hot ratios=" + hotAuctionRatio + "/" + hotBiddersRatio + "/" + hotSellersRatio
                + ", splits=" + splits + ", base-time=" + baseTime + ", rate.limited=" + rateLimited + "}";
    }
}
