package weir.bench.flink.source;

import org.apache.flink.table.data.GenericRowData;
import org.apache.flink.table.data.RowData;
import org.apache.flink.table.data.StringData;
import org.apache.flink.table.data.TimestampData;

import weir.bench.flink.gen.Model;

/** Events as rows of the nexmark table: event_type INT, person ROW, auction ROW, bid ROW. */
final class Rows {
    private Rows() {}

    static RowData of(Model.Event e) {
        GenericRowData row = new GenericRowData(4);
        row.setField(0, e.type);
        switch (e.type) {
            case Model.PERSON: {
                Model.Person p = e.person;
                row.setField(1, GenericRowData.of(p.id, str(p.name), str(p.emailAddress), str(p.creditCard), str(p.city),
                        str(p.state), ts(p.dateTime), str(p.extra)));
                break;
            }
            case Model.AUCTION: {
                Model.Auction a = e.auction;
                row.setField(2, GenericRowData.of(a.id, str(a.itemName), str(a.description), a.initialBid, a.reserve,
                        ts(a.dateTime), ts(a.expires), a.seller, a.category, str(a.extra)));
                break;
            }
            default: {
                Model.Bid b = e.bid;
                row.setField(3, GenericRowData.of(b.auction, b.bidder, b.price, str(b.channel), str(b.url), ts(b.dateTime),
                        str(b.extra)));
            }
        }
        return row;
    }

    private static StringData str(String s) {
        return StringData.fromString(s);
    }

    private static TimestampData ts(long ms) {
        return TimestampData.fromEpochMillis(ms);
    }
}
