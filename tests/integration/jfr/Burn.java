import java.util.*;
public class Burn {
    static long work(int n) { long s = 0; for (int i = 0; i < n; i++) s += Integer.toString(i).hashCode(); return s; }
    static List<byte[]> keep = new ArrayList<>();
    static void alloc() { keep.add(new byte[4096 + (int)(Math.random()*4096)]); if (keep.size() > 1000) keep.clear(); }
    public static void main(String[] a) throws Exception {
        long end = System.currentTimeMillis() + Long.parseLong(a[0]);
        long s = 0;
        while (System.currentTimeMillis() < end) { s += work(10000); alloc(); }
        System.out.println(s);
    }
}
