using System;
using System.IO;
using System.Runtime.InteropServices;
using System.Text;
using static Falconet.Transport.IoUring.IoUringNative;

namespace Falconet.Transport.IoUring;

/// <summary>
/// Whether this process can run the io_uring transport, found once by asking the kernel: the sysctl that disables
/// io_uring, a test ring with the setup flags the transport uses (a seccomp profile that blocks the call answers EPERM or
/// ENOSYS here), the features it relies on, and a probe of every opcode it submits.
/// </summary>
internal sealed unsafe class IoUringSupport
{
    /// <summary>Setup flags every ring of the transport uses.</summary>
    public const uint RequiredFlags = SetupSubmitAll | SetupSingleIssuer | SetupDeferTaskRun;

    private static readonly byte[] s_requiredOpcodes = [OpcodeAccept, OpcodeRecv, OpcodeSend, OpcodeSendMsg, OpcodeRead, OpcodeClose, OpcodeAsyncCancel, OpcodeTimeout];
    private static readonly Lazy<IoUringSupport> s_current = new(Detect);

    private IoUringSupport(string kernel, string? unavailableReason, uint optionalFlags)
    {
        Kernel = kernel;
        UnavailableReason = unavailableReason;
        OptionalFlags = optionalFlags;
    }

    /// <summary>What this process found (detected at the first use, then kept).</summary>
    public static IoUringSupport Current => s_current.Value;

    /// <summary>The kernel release, e.g. <c>6.18.4</c>.</summary>
    public string Kernel { get; }

    /// <summary>Null when io_uring can be used; otherwise one sentence that says why not.</summary>
    public string? UnavailableReason { get; }

    /// <summary>True when io_uring can be used.</summary>
    public bool IsAvailable => UnavailableReason is null;

    /// <summary>Setup flags this kernel accepts beyond <see cref="RequiredFlags"/> (<c>IORING_SETUP_NO_SQARRAY</c>, Linux 6.6).</summary>
    public uint OptionalFlags { get; }

    private static IoUringSupport Detect()
    {
        string kernel = KernelRelease();
        if (!OperatingSystem.IsLinux())
        {
            return new IoUringSupport(kernel, "io_uring exists only on Linux.", 0);
        }

        if (ReadDisabledSysctl() is 2)
        {
            return new IoUringSupport(kernel, "io_uring is disabled on this system (sysctl kernel.io_uring_disabled = 2).", 0);
        }

        uint optional = SetupNoSqArray;
        int fd = IoUringRing.TrySetup(8, 16, RequiredFlags | optional, 0, out Params parameters);
        if (fd == -EINVAL)
        {
            optional = 0;
            fd = IoUringRing.TrySetup(8, 16, RequiredFlags, 0, out parameters);
        }

        if (fd < 0)
        {
            return new IoUringSupport(kernel, SetupFailureReason(-fd, kernel), 0);
        }

        try
        {
            string? missing = MissingFeature(parameters.Features) ?? MissingOpcode(fd) ?? MissingBufferRing(fd);
            return new IoUringSupport(kernel, missing is null ? null : $"io_uring on Linux {kernel} lacks {missing}.", optional);
        }
        finally
        {
            Close(fd);
        }
    }

    /// <summary>Why <c>io_uring_setup</c> failed with <paramref name="errno"/>, in words that say what to change.</summary>
    internal static string SetupFailureReason(int errno, string kernel) => errno switch
    {
        ENOSYS => $"io_uring_setup is not available (ENOSYS): Linux {kernel} was built without io_uring, or a seccomp profile (such as a container's default) blocks it.",
        EPERM => ReadDisabledSysctl() is 1
            ? "io_uring_setup was refused (EPERM): sysctl kernel.io_uring_disabled = 1 allows it only to the kernel.io_uring_group group."
            : "io_uring_setup was refused (EPERM): a seccomp profile (such as a container's default) or a security module blocks it.",
        EINVAL => $"io_uring on Linux {kernel} does not accept IORING_SETUP_DEFER_TASKRUN and IORING_SETUP_SINGLE_ISSUER (Linux 6.1 or later is needed).",
        ENOMEM => "io_uring_setup failed (ENOMEM): the locked-memory limit (ulimit -l) is too low for the rings.",
        _ => $"io_uring_setup failed: {ErrorName(errno)} ({ErrorText(errno)}).",
    };

    private static string? MissingFeature(uint features)
    {
        if ((features & FeatureNoDrop) == 0)
        {
            return "IORING_FEAT_NODROP";
        }

        return (features & FeatureFastPoll) == 0 ? "IORING_FEAT_FAST_POLL" : null;
    }

    private static string? MissingOpcode(int fd)
    {
        const int Ops = 256;
        int size = 16 + (Ops * 8);
        byte* probe = (byte*)NativeMemory.AllocZeroed((nuint)size);
        try
        {
            int result = IoUringNative.Register(fd, RegisterProbe, probe, Ops);
            if (result < 0)
            {
                return $"IORING_REGISTER_PROBE ({ErrorName(-result)})";
            }

            int lastOp = probe[0];
            foreach (byte opcode in s_requiredOpcodes)
            {
                // struct io_uring_probe_op { u8 op; u8 resv; u16 flags; u32 resv2; } after a 16-byte header.
                ushort flags = *(ushort*)(probe + 16 + (opcode * 8) + 2);
                if (opcode > lastOp || (flags & ProbeOpSupported) == 0)
                {
                    return $"opcode {opcode}";
                }
            }

            return null;
        }
        finally
        {
            NativeMemory.Free(probe);
        }
    }

    /// <summary>Registers and unregisters a small provided-buffer ring, as every loop does for its receives.</summary>
    private static string? MissingBufferRing(int fd)
    {
        const int Page = 4096;
        nint memory = Mmap(0, Page, ProtRead | ProtWrite, MapPrivate | MapAnonymous, -1, 0);
        if (memory == -1)
        {
            return $"memory for a provided-buffer ring ({ErrorName(Marshal.GetLastPInvokeError())})";
        }

        try
        {
            var registration = new BufferRingRegistration { RingAddress = (ulong)memory, RingEntries = 8, GroupId = 0 };
            int result = IoUringNative.Register(fd, RegisterPbufRing, &registration, 1);
            if (result < 0)
            {
                return $"provided-buffer rings (IORING_REGISTER_PBUF_RING: {ErrorName(-result)})";
            }

            IoUringNative.Register(fd, UnregisterPbufRing, &registration, 1);
            return null;
        }
        finally
        {
            Munmap(memory, Page);
        }
    }

    private static int? ReadDisabledSysctl()
    {
        try
        {
            string text = File.ReadAllText("/proc/sys/kernel/io_uring_disabled").Trim();
            return int.TryParse(text, System.Globalization.NumberStyles.None, System.Globalization.CultureInfo.InvariantCulture, out int value) ? value : null;
        }
        catch (Exception exception) when (exception is IOException or UnauthorizedAccessException)
        {
            return null;
        }
    }

    private static string KernelRelease()
    {
        if (!OperatingSystem.IsLinux())
        {
            return Environment.OSVersion.VersionString;
        }

        // struct utsname: six fields of 65 bytes on Linux; the release is the third.
        byte* buffer = stackalloc byte[6 * 65];
        if (Uname(buffer) != 0)
        {
            return "(unknown)";
        }

        ReadOnlySpan<byte> release = new ReadOnlySpan<byte>(buffer + (2 * 65), 65);
        int end = release.IndexOf((byte)0);
        return Encoding.ASCII.GetString(end < 0 ? release : release.Slice(0, end));
    }
}
