package weir.bench.flink.gen;

/** Nexmark's entities with Flink Nexmark's field names; times in ms since the epoch (UTC). */
public final class Model {
    private Model() {}

    public static final int PERSON = 0;
    public static final int AUCTION = 1;
    public static final int BID = 2;

    public static final class Person {
        public long id;
        public String name;
        public String emailAddress;
        public String creditCard;
        public String city;
        public String state;
        public long dateTime;
        public String extra;
    }

    public static final class Auction {
        public long id;
        public String itemName;
        public String description;
        public long initialBid;
        public long reserve;
        public long dateTime;
        public long expires;
        public long seller;
        public long category;
        public String extra;
    }

    public static final class Bid {
        public long auction;
        public long bidder;
        public long price;
        public String channel;
        public String url;
        public long dateTime;
        public String extra;
    }

    /** One event: exactly one of person, auction and bid is set, as type says. */
    public static final class Event {
        public int type;
        public Person person;
        public Auction auction;
        public Bid bid;

        public long dateTime() {
            switch (type) {
                case PERSON: return person.dateTime;
                case AUCTION: return auction.dateTime;
                default: return bid.dateTime;
            }
        }
    }
}
