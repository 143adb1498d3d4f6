// SPDX-License-Identifier: Apache-2.0
// A Rust program for the symbolize tests: a module, a generic struct's
// method, a trait implemented twice and called through a trait object, a
// closure, and iterator adapters the optimizer inlines.
mod shop {
    pub trait Price {
        fn price(&self, n: u64) -> u64;
    }

    pub struct Flat(pub u64);
    pub struct Tiered(pub Vec<u64>);

    impl Price for Flat {
        #[inline(never)]
        fn price(&self, n: u64) -> u64 {
            n.wrapping_mul(self.0)
        }
    }

    impl Price for Tiered {
        #[inline(never)]
        fn price(&self, n: u64) -> u64 {
            self.0.iter().map(|t| n.wrapping_mul(*t) >> 3).fold(0, |a, b| a ^ b)
        }
    }

    pub struct Walker<T> {
        pub items: Vec<T>,
    }

    impl<T: Copy + Into<u64>> Walker<T> {
        #[inline(never)]
        pub fn walk(&self, rounds: u32, pricer: &dyn Price) -> u64 {
            let mut total = 0u64;
            for r in 0..rounds {
                total = self
                    .items
                    .iter()
                    .filter(|x| (**x).into() % 3 != u64::from(r % 3))
                    .fold(total, |t, x| t.wrapping_mul(31).wrapping_add(pricer.price((*x).into())));
            }
            total
        }
    }
}

use shop::{Flat, Price, Tiered, Walker};

fn main() {
    let rounds: u32 = std::env::args().nth(1).and_then(|a| a.parse().ok()).unwrap_or(3);
    let small = Walker { items: (0..5000u32).collect() };
    let wide = Walker { items: (0..5000u16).collect() };
    let pricers: Vec<Box<dyn Price>> = vec![Box::new(Flat(7)), Box::new(Tiered(vec![3, 5, 11]))];
    let mut out = 0u64;
    for p in &pricers {
        out ^= small.walk(rounds, p.as_ref()) ^ wide.walk(rounds, p.as_ref());
    }
    println!("{}", out);
}
