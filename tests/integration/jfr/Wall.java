import java.util.Set;
import jdk.jfr.*;

/* async-profiler's events, written by the JDK's own recorder: its wall-clock
 * sample (with how many samples it stands for), its malloc sample, and an
 * "event" setting that says which event the profiler samples. */
public class Wall {
    @Name("profiler.WallClockSample")
    @StackTrace(true)
    static class WallClockSample extends Event {
        int samples;
    }

    @Name("profiler.Malloc")
    @StackTrace(true)
    static class Malloc extends Event {
        long address;
        long size;
    }

    /* The setting async-profiler writes as jdk.ActiveSetting {name: event}. */
    public static final class ProfilerEvent extends SettingControl {
        private String value = "cpu";
        @Override public String combine(Set<String> values) {
            return values.isEmpty() ? value : values.iterator().next();
        }
        @Override public void setValue(String v) { value = v; }
        @Override public String getValue() { return value; }
    }

    @Name("profiler.Settings")
    static class Settings extends Event {
        @SettingDefinition
        @Name("event")
        public boolean event(ProfilerEvent control) { return true; }
    }

    static void sleepy(int ms) throws InterruptedException { Thread.sleep(ms); }

    static long busy(long n) {
        long x = 0;
        for (long i = 0; i < n; i++)
            x += Long.toString(i).hashCode();
        return x;
    }

    static void wallSample(int samples) {
        WallClockSample e = new WallClockSample();
        e.samples = samples;
        e.commit();
    }

    static void malloc(long size) {
        Malloc m = new Malloc();
        m.address = 0x1000 + size;
        m.size = size;
        m.commit();
    }

    public static void main(String[] args) throws Exception {
        FlightRecorder.register(Settings.class);
        long until = System.currentTimeMillis() + Long.parseLong(args[0]);
        long sink = 0;
        for (int i = 1; System.currentTimeMillis() < until; i++) {
            sink += busy(100000);
            sleepy(5);
            wallSample(i % 3 + 1);
            malloc(64L * i);
        }
        System.out.println(sink);
    }
}
