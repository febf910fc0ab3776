package weir.bench.flink.gen;

import java.io.Serializable;

/**
 * The Nexmark generator: the Java twin of Generator in
 * connector/nexmark/generator.go. event(split, k) is a pure function of the
 * configuration, so any event can be made alone and both languages make the
 * same stream.
 */
public final class Generator implements Serializable {
    private static final long serialVersionUID = 1L;

    private static final long FIRST_PERSON_ID = 1000;
    private static final long FIRST_AUCTION_ID = 1000;
    private static final long FIRST_CATEGORY_ID = 10;
    private static final int NUM_CATEGORIES = 5;
    private static final int ID_LEAD = 10;
    private static final long HOT_BLOCK = 100;

    private final NexmarkConfig cfg;
    private final long total;
    private final double delayUs;
    private final long[] splitLen;
    private final long[] firstId;
    private final long auctionsN;

    public Generator(NexmarkConfig cfg) {
        cfg.validate();
        this.cfg = cfg;
        int n = cfg.splits;
        total = cfg.personProportion + cfg.auctionProportion + cfg.bidProportion;
        delayUs = 1e6 / cfg.firstEventRate * n;
        auctionsN = (long) cfg.numInFlightAuctions * total / cfg.auctionProportion;
        long max = cfg.eventsNum;
        if (max == 0) {
            max = Long.MAX_VALUE / (total * Math.max(cfg.avgPersonSize, Math.max(cfg.avgAuctionSize, cfg.avgBidSize)));
        }
        splitLen = new long[n];
        firstId = new long[n];
        long per = max / n;
        long id = 1;
        for (int i = 0; i < n; i++) {
            splitLen[i] = i == n - 1 ? max - per * (n - 1) : per;
            firstId[i] = id;
            id += splitLen[i];
        }
    }

    public NexmarkConfig config() {
        return cfg;
    }

    public int splits() {
        return cfg.splits;
    }

    public long splitLen(int split) {
        return splitLen[split];
    }

    public long eventId(int split, long k) {
        return firstId[split] + 1 + k;
    }

    public long timestamp(long k) {
        return cfg.baseTime + (long) ((1 + k) * delayUs) / 1000;
    }

    public Model.Event event(int split, long k) {
        long id = eventId(split, k);
        long ts = timestamp(k);
        SplitMix r = new SplitMix(id);
        long rem = id % total;
        Model.Event e = new Model.Event();
        if (rem < cfg.personProportion) {
            e.type = Model.PERSON;
            e.person = person(r, id, ts);
        } else if (rem < cfg.personProportion + cfg.auctionProportion) {
            e.type = Model.AUCTION;
            e.auction = auction(r, id, k, ts);
        } else {
            e.type = Model.BID;
            e.bid = bid(r, id, ts);
        }
        return e;
    }

    private long lastPerson0(long id) {
        long epoch = id / total;
        long off = id % total;
        if (off >= cfg.personProportion) {
            off = cfg.personProportion - 1;
        }
        return epoch * cfg.personProportion + off;
    }

    private long lastAuction0(long id) {
        long epoch = id / total;
        long off = id % total;
        long p = cfg.personProportion;
        long a = cfg.auctionProportion;
        if (off < p) {
            epoch--;
            off = a - 1;
        } else if (off >= p + a) {
            off = a - 1;
        } else {
            off -= p;
        }
        return epoch * a + off;
    }

    private long nextPerson0(SplitMix r, long id) {
        long num = lastPerson0(id) + 1;
        long active = Math.min(num, cfg.numActivePeople);
        return num - active + r.longn(active + ID_LEAD);
    }

    private long nextAuction0(SplitMix r, long id) {
        long last = lastAuction0(id);
        long lo = Math.max(last - cfg.numInFlightAuctions, 0);
        return lo + r.longn(last - lo + 1 + ID_LEAD);
    }

    private Model.Person person(SplitMix r, long id, long ts) {
        Model.Person p = new Model.Person();
        p.id = lastPerson0(id) + FIRST_PERSON_ID;
        p.dateTime = ts;
        p.name = Tables.FIRST_NAMES[r.intn(Tables.FIRST_NAMES.length)] + " " + Tables.LAST_NAMES[r.intn(Tables.LAST_NAMES.length)];
        p.emailAddress = r.str(7, ' ') + "@" + r.str(5, ' ') + ".com";
        StringBuilder cc = new StringBuilder(19);
        for (int i = 0; i < 4; i++) {
            if (i > 0) {
                cc.append(' ');
            }
            int v = r.intn(10000);
            cc.append((char) ('0' + v / 1000)).append((char) ('0' + v / 100 % 10))
                    .append((char) ('0' + v / 10 % 10)).append((char) ('0' + v % 10));
        }
        p.creditCard = cc.toString();
        p.city = Tables.CITIES[r.intn(Tables.CITIES.length)];
        p.state = Tables.STATES[r.intn(Tables.STATES.length)];
        int size = 8 + p.name.length() + p.emailAddress.length() + p.creditCard.length() + p.city.length() + p.state.length();
        p.extra = r.extra(size, cfg.avgPersonSize);
        return p;
    }

    private Model.Auction auction(SplitMix r, long id, long k, long ts) {
        Model.Auction a = new Model.Auction();
        a.id = lastAuction0(id) + FIRST_AUCTION_ID;
        a.dateTime = ts;
        if (r.intn(cfg.hotSellersRatio) > 0) {
            a.seller = lastPerson0(id) / HOT_BLOCK * HOT_BLOCK;
        } else {
            a.seller = nextPerson0(r, id);
        }
        a.seller += FIRST_PERSON_ID;
        a.category = FIRST_CATEGORY_ID + r.intn(NUM_CATEGORIES);
        a.initialBid = r.price();
        long horizon = timestamp(k + auctionsN) - ts;
        a.expires = ts + 1 + r.longn(Math.max(2 * horizon, 1));
        a.itemName = r.str(20, ' ');
        a.description = r.str(100, ' ');
        a.reserve = a.initialBid + r.price();
        a.extra = r.extra(8 + a.itemName.length() + a.description.length() + 40, cfg.avgAuctionSize);
        return a;
    }

    private Model.Bid bid(SplitMix r, long id, long ts) {
        Model.Bid b = new Model.Bid();
        b.dateTime = ts;
        if (r.intn(cfg.hotAuctionRatio) > 0) {
            b.auction = lastAuction0(id) / HOT_BLOCK * HOT_BLOCK;
        } else {
            b.auction = nextAuction0(r, id);
        }
        b.auction += FIRST_AUCTION_ID;
        if (r.intn(cfg.hotBiddersRatio) > 0) {
            b.bidder = lastPerson0(id) / HOT_BLOCK * HOT_BLOCK + 1;
        } else {
            b.bidder = nextPerson0(r, id);
        }
        b.bidder += 2 * FIRST_PERSON_ID; // Flink Nexmark's double offset, kept
        b.price = r.price();
        if (r.intn(2) > 0) {
            int i = r.intn(Tables.HOT_CHANNELS.length);
            b.channel = Tables.HOT_CHANNELS[i];
            b.url = Tables.HOT_URLS[i];
        } else {
            int c = r.intn(Tables.NUM_CHANNELS);
            b.channel = Tables.CHANNEL_NAMES[c];
            b.url = Tables.CHANNEL_URLS[c];
        }
        b.extra = r.extra(32, cfg.avgBidSize);
        return b;
    }
}
