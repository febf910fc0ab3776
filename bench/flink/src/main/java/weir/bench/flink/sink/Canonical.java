package weir.bench.flink.sink;

import org.apache.flink.table.data.DecimalData;
import org.apache.flink.table.data.RowData;
import org.apache.flink.table.data.TimestampData;
import org.apache.flink.table.types.logical.DecimalType;
import org.apache.flink.table.types.logical.LogicalType;

import java.time.LocalDate;
import java.time.ZoneOffset;
import java.time.format.DateTimeFormatter;
import java.util.List;

/**
 * The canonical changelog text that bench/nexmark compares (its
 * changelog.go documents the format): "KIND\tfield\tfield…", NULL as \N,
 * DECIMAL plain with the type's scale, TIMESTAMP as yyyy-MM-dd
 * HH:mm:ss.SSS, strings with \\, \t and \n escaped.
 */
final class Canonical {
    private static final DateTimeFormatter TS = DateTimeFormatter.ofPattern("yyyy-MM-dd HH:mm:ss.SSS");

    private final LogicalType[] types;
    private final RowData.FieldGetter[] getters;

    Canonical(List<LogicalType> types) {
        this.types = types.toArray(new LogicalType[0]);
        this.getters = new RowData.FieldGetter[this.types.length];
        for (int i = 0; i < this.types.length; i++) {
            getters[i] = RowData.createFieldGetter(this.types[i], i);
        }
    }

    String line(RowData row) {
        StringBuilder b = new StringBuilder(row.getRowKind().shortString());
        for (int i = 0; i < getters.length; i++) {
            b.append('\t').append(field(getters[i].getFieldOrNull(row), types[i]));
        }
        return b.toString();
    }

    private static String field(Object v, LogicalType t) {
        if (v == null) {
            return "\\N";
        }
        switch (t.getTypeRoot()) {
            case CHAR:
            case VARCHAR:
                return v.toString().replace("\\", "\\\\").replace("\t", "\\t").replace("\n", "\\n");
            case DECIMAL:
                return ((DecimalData) v).toBigDecimal().setScale(((DecimalType) t).getScale()).toPlainString();
            case TIMESTAMP_WITHOUT_TIME_ZONE:
                return ((TimestampData) v).toLocalDateTime().format(TS);
            case TIMESTAMP_WITH_LOCAL_TIME_ZONE:
                return ((TimestampData) v).toInstant().atOffset(ZoneOffset.UTC).toLocalDateTime().format(TS);
            case DATE:
                return LocalDate.ofEpochDay((Integer) v).toString();
            default:
                return v.toString();
        }
    }
}
