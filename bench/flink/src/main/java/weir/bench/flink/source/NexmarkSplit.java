package weir.bench.flink.source;

import org.apache.flink.api.connector.source.SourceSplit;
import org.apache.flink.core.io.SimpleVersionedSerializer;

import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.DataInputStream;
import java.io.DataOutputStream;
import java.io.IOException;
import java.util.ArrayList;
import java.util.List;

/** Generator split {@code index} with its position: the next k to emit (as in Weir's source). */
public final class NexmarkSplit implements SourceSplit {
    final int index;
    final long next;

    NexmarkSplit(int index, long next) {
        this.index = index;
        this.next = next;
    }

    @Override
    public String splitId() {
        return Integer.toString(index);
    }

    /** Version-1 encoding: index (int), next (long). */
    static final class Serializer implements SimpleVersionedSerializer<NexmarkSplit> {
        @Override
        public int getVersion() {
            return 1;
        }

        @Override
        public byte[] serialize(NexmarkSplit s) {
            return new byte[] {
                (byte) (s.index >>> 24), (byte) (s.index >>> 16), (byte) (s.index >>> 8), (byte) s.index,
                (byte) (s.next >>> 56), (byte) (s.next >>> 48), (byte) (s.next >>> 40), (byte) (s.next >>> 32),
                (byte) (s.next >>> 24), (byte) (s.next >>> 16), (byte) (s.next >>> 8), (byte) s.next,
            };
        }

        @Override
        public NexmarkSplit deserialize(int version, byte[] b) throws IOException {
            DataInputStream in = new DataInputStream(new ByteArrayInputStream(b));
            return new NexmarkSplit(in.readInt(), in.readLong());
        }
    }

    /** The enumerator's checkpoint: the splits not yet assigned. */
    static final class ListSerializer implements SimpleVersionedSerializer<List<NexmarkSplit>> {
        @Override
        public int getVersion() {
            return 1;
        }

        @Override
        public byte[] serialize(List<NexmarkSplit> splits) throws IOException {
            ByteArrayOutputStream bytes = new ByteArrayOutputStream();
            DataOutputStream out = new DataOutputStream(bytes);
            out.writeInt(splits.size());
            for (NexmarkSplit s : splits) {
                out.writeInt(s.index);
                out.writeLong(s.next);
            }
            out.flush();
            return bytes.toByteArray();
        }

        @Override
        public List<NexmarkSplit> deserialize(int version, byte[] b) throws IOException {
            DataInputStream in = new DataInputStream(new ByteArrayInputStream(b));
            int n = in.readInt();
            List<NexmarkSplit> out = new ArrayList<>(n);
            for (int i = 0; i < n; i++) {
                out.add(new NexmarkSplit(in.readInt(), in.readLong()));
            }
            return out;
        }
    }
}
