// SPDX-License-Identifier: Apache-2.0
/* A C function followed by code under a label of no type, the way entry
 * points written in assembly are (the dynamic loader's _start): that
 * code's addresses belong to the label, not to the function before it. */
__attribute__((noinline)) int before_label(int x)
{
    return x * 3 + 1;
}

__asm__(".text\n"
        ".globl after_label\n"
        "after_label:\n"
        "    nop\n"
        "    nop\n"
        "    nop\n"
        "    ret\n");

void after_label(void);

int main(int argc, char **argv)
{
    (void)argv;
    after_label();
    return before_label(argc);
}
