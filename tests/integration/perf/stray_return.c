// SPDX-License-Identifier: Apache-2.0
/* A program whose busy function lies about its caller (x86-64): its CFI
 * says the return address is a word that holds an address in the stack,
 * as an unwinder finds where a frame's CFI is wrong or a stack is half
 * made (a program's first instructions). Its frame pointer chain is
 * sound, so an unwinder that goes on by frame pointers from the stack
 * address finds main again: where a frame is in no code, the stack ends. */

/* stray_spin(n): counts n down. Frame: the caller's rbp at 24(%rsp) (rbp
 * points there), the stray return address at 16(%rsp). */
__asm__(".text\n"
        ".globl stray_spin\n"
        ".type stray_spin, @function\n"
        "stray_spin:\n"
        ".cfi_startproc\n"
        "    pushq %rbp\n"
        ".cfi_adjust_cfa_offset 8\n"
        "    movq %rsp, %rbp\n"
        "    subq $24, %rsp\n"
        "    leaq 8(%rsp), %rax\n"
        "    movq %rax, 16(%rsp)\n"
        /* from here the caller's frame is 24 bytes up and returns to the stack */
        ".cfi_def_cfa %rsp, 24\n"
        "1:  decq %rdi\n"
        "    jnz 1b\n"
        "    addq $24, %rsp\n"
        ".cfi_def_cfa %rsp, 16\n"
        "    popq %rbp\n"
        ".cfi_def_cfa %rsp, 8\n"
        "    ret\n"
        ".cfi_endproc\n"
        ".size stray_spin, .-stray_spin\n");

void stray_spin(long n);

int main(void)
{
    stray_spin(1200L * 1000 * 1000);
    return 0;
}
