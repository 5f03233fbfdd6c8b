using System;
using System.Runtime.InteropServices;

/// <summary>
/// A .NET startup hook (named as the runtime requires: <c>StartupHook</c>, no namespace) that makes the process it runs in
/// look like a container under a default seccomp profile: every <c>io_uring_setup</c> fails with EPERM. The io_uring
/// fallback tests start the sample with <c>DOTNET_STARTUP_HOOKS</c> pointing at this assembly. With
/// <see cref="DenySchedulingVariable"/> set to 1, changing a thread's scheduling policy (<c>sched_setscheduler</c>,
/// <c>sched_setattr</c>) fails with EPERM too, as under a profile that forbids it.
/// </summary>
public static partial class StartupHook
{
    private const uint SeccompRetAllow = 0x7fff0000;
    private const uint SeccompRetErrno = 0x00050000;
    private const uint Eperm = 1;
    private const uint IoUringSetup = 425;

    /// <summary>The environment variable that also denies the scheduling-policy calls.</summary>
    public const string DenySchedulingVariable = "FALCONET_TEST_SECCOMP_DENY_SCHED";

    /// <summary>Installs the filter on every thread of the process (TSYNC); the runtime calls it before Main.</summary>
    public static void Initialize()
    {
        (uint arch, long seccompCall, uint setScheduler, uint setAttributes) = RuntimeInformation.ProcessArchitecture switch
        {
            Architecture.X64 => (0xC000003Eu, 317L, 144u, 314u),
            Architecture.Arm64 => (0xC00000B7u, 277L, 119u, 274u),
            _ => throw new PlatformNotSupportedException("The seccomp test hook knows x64 and arm64 only."),
        };

        if (Environment.GetEnvironmentVariable(DenySchedulingVariable) != "1")
        {
            // Compared twice more against io_uring_setup: the program keeps one shape.
            setScheduler = setAttributes = IoUringSetup;
        }

        // struct sock_filter { u16 code; u8 jt; u8 jf; u32 k; }: load the architecture, then the call number; the denied
        // calls on this architecture return EPERM, everything else is allowed.
        ulong[] program =
        [
            Filter(0x20, 0, 0, 4),                          // ld [4]            arch
            Filter(0x15, 0, 4, arch),                       // jeq arch, 0, allow
            Filter(0x20, 0, 0, 0),                          // ld [0]            nr
            Filter(0x15, 3, 0, IoUringSetup),               // jeq io_uring_setup, deny
            Filter(0x15, 2, 0, setScheduler),               // jeq sched_setscheduler, deny
            Filter(0x15, 1, 0, setAttributes),              // jeq sched_setattr, deny
            Filter(0x06, 0, 0, SeccompRetAllow),            // allow: ret ALLOW
            Filter(0x06, 0, 0, SeccompRetErrno | Eperm),    // deny: ret ERRNO(EPERM)
        ];

        if (Prctl(38 /* PR_SET_NO_NEW_PRIVS */, 1, 0, 0, 0) != 0)
        {
            throw new InvalidOperationException($"prctl(PR_SET_NO_NEW_PRIVS) failed: {Marshal.GetLastPInvokeError()}");
        }

        unsafe
        {
            fixed (ulong* filter = program)
            {
                // struct sock_fprog { u16 len; struct sock_filter* filter; }
                byte* fprog = stackalloc byte[16];
                *(ushort*)fprog = (ushort)program.Length;
                *(ulong**)(fprog + 8) = filter;
                if (Seccomp(seccompCall, 1 /* SECCOMP_SET_MODE_FILTER */, 1 /* SECCOMP_FILTER_FLAG_TSYNC */, fprog) != 0)
                {
                    throw new InvalidOperationException($"seccomp(SECCOMP_SET_MODE_FILTER) failed: {Marshal.GetLastPInvokeError()}");
                }
            }
        }
    }

    private static ulong Filter(ushort code, byte jumpTrue, byte jumpFalse, uint k)
        => code | ((ulong)jumpTrue << 16) | ((ulong)jumpFalse << 24) | ((ulong)k << 32);

    [LibraryImport("libc", EntryPoint = "prctl", SetLastError = true)]
    private static partial int Prctl(int option, ulong arg2, ulong arg3, ulong arg4, ulong arg5);

    [LibraryImport("libc", EntryPoint = "syscall", SetLastError = true)]
    private static unsafe partial int Seccomp(long number, uint operation, uint flags, void* program);
}
