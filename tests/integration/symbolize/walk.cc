// SPDX-License-Identifier: Apache-2.0
/* A C++ program for the symbolize tests, built with -O2 -g: a namespace, a
 * class template whose member is declared in the class and defined
 * outside it, inline members and a lambda the compiler inlines, an
 * overloaded function, so names come from linkage names, specifications
 * and abstract origins, demangled. */
#include <cstdint>
#include <cstdio>
#include <cstdlib>

namespace shop {

static volatile uint64_t sink;

template <typename T> class Walker {
public:
    explicit Walker(T seed) : seed_(seed) {}
    uint64_t walk(int n) const;

private:
    static uint64_t mix(uint64_t x)
    {
        x ^= x >> 33;
        x *= 0xff51afd7ed558ccdull;
        return x ^ (x >> 29);
    }
    T seed_;
};

template <typename T> __attribute__((noinline)) uint64_t Walker<T>::walk(int n) const
{
    uint64_t s = static_cast<uint64_t>(seed_);
    auto step = [](uint64_t x, int i) { return i & 1 ? mix(x + (uint64_t)i) : mix(x) * 3; };
    for (int i = 0; i < n; i++)
        s = step(s, i);
    return s;
}

__attribute__((noinline)) uint64_t outer(int n)
{
    uint64_t v = 0;
    for (int k = 0; k < n; k++)
        v += Walker<int>(k).walk(n);
    return v;
}

__attribute__((noinline)) uint64_t outer(int n, long twice)
{
    return outer(n) + Walker<long>(twice).walk(n);
}

}  // namespace shop

int main(int argc, char **argv)
{
    int n = argc > 1 ? atoi(argv[1]) : 1000;
    shop::sink = shop::outer(n, 2);
    printf("%llu\n", (unsigned long long)shop::sink);
    return 0;
}
