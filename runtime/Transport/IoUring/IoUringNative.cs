using System;
using System.Runtime.InteropServices;

namespace Falconet.Transport.IoUring;

/// <summary>
/// The Linux calls the io_uring transport makes: the three io_uring system calls through libc's <c>syscall</c>, <c>mmap</c>
/// of the rings, and the few socket calls that have no ring operation worth using (see docs/runtime-io.md).
/// </summary>
/// <remarks>
/// The structures below mirror <c>linux/io_uring.h</c> (stable kernel ABI, the same on x86-64 and arm64). The system
/// call numbers 425 to 427 are shared by every architecture's table (they were added after the tables were unified).
/// </remarks>
internal static unsafe partial class IoUringNative
{
    private const string Libc = "libc";

    public const long SysIoUringSetup = 425;
    public const long SysIoUringEnter = 426;
    public const long SysIoUringRegister = 427;

    // io_uring_setup flags.
    public const uint SetupSqPoll = 1u << 1;
    public const uint SetupCqSize = 1u << 3;
    public const uint SetupClamp = 1u << 4;
    public const uint SetupSubmitAll = 1u << 7;
    public const uint SetupCoopTaskRun = 1u << 8;
    public const uint SetupTaskRunFlag = 1u << 9;
    public const uint SetupSingleIssuer = 1u << 12;
    public const uint SetupDeferTaskRun = 1u << 13;
    public const uint SetupNoSqArray = 1u << 16;

    // io_uring_params.features.
    public const uint FeatureSingleMmap = 1u << 0;
    public const uint FeatureNoDrop = 1u << 1;
    public const uint FeatureFastPoll = 1u << 5;
    public const uint FeatureExtArg = 1u << 8;
    public const uint FeatureMinTimeout = 1u << 15;

    // io_uring_enter flags.
    public const uint EnterGetEvents = 1u << 0;
    public const uint EnterSqWakeup = 1u << 1;
    public const uint EnterSqWait = 1u << 2;
    public const uint EnterExtArg = 1u << 3;

    // sq_ring->flags.
    public const uint SqNeedWakeup = 1u << 0;
    public const uint SqCqOverflow = 1u << 1;
    public const uint SqTaskRun = 1u << 2;

    // Opcodes (enum io_uring_op).
    public const byte OpcodeNop = 0;
    public const byte OpcodeSendMsg = 9;
    public const byte OpcodeTimeout = 11;
    public const byte OpcodeAccept = 13;
    public const byte OpcodeAsyncCancel = 14;
    public const byte OpcodeClose = 19;
    public const byte OpcodeRead = 22;
    public const byte OpcodeSend = 26;
    public const byte OpcodeRecv = 27;
    public const byte OpcodeShutdown = 34;

    // sqe->flags.
    public const byte SqeBufferSelect = 1 << 5;

    // sqe->ioprio for send and receive, and for accept.
    public const ushort RecvSendPollFirst = 1 << 0;
    public const ushort RecvMultishot = 1 << 1;
    public const ushort AcceptMultishot = 1 << 0;

    // sqe->cancel_flags.
    public const uint CancelAll = 1u << 0;
    public const uint CancelFd = 1u << 1;
    public const uint CancelAny = 1u << 2;

    // cqe->flags.
    public const uint CqeBuffer = 1u << 0;
    public const uint CqeMore = 1u << 1;
    public const int CqeBufferShift = 16;

    // io_uring_register opcodes.
    public const uint RegisterProbe = 8;
    public const uint RegisterPbufRing = 22;
    public const uint UnregisterPbufRing = 23;

    public const ushort ProbeOpSupported = 1;

    // mmap offsets of the rings.
    public const long OffSqRing = 0;
    public const long OffCqRing = 0x8000000;
    public const long OffSqes = 0x10000000;

    public const int ProtRead = 1;
    public const int ProtWrite = 2;
    public const int MapShared = 0x01;
    public const int MapPrivate = 0x02;
    public const int MapAnonymous = 0x20;
    public const int MapPopulate = 0x8000;

    // errno values (Linux, every architecture .NET runs on).
    public const int EPERM = 1;
    public const int ENOENT = 2;
    public const int EINTR = 4;
    public const int EBADF = 9;
    public const int EAGAIN = 11;
    public const int ENOMEM = 12;
    public const int EBUSY = 16;
    public const int ENFILE = 23;
    public const int EMFILE = 24;
    public const int EPIPE = 32;
    public const int ENOSYS = 38;
    public const int EALREADY = 114;
    public const int EBADR = 53;
    public const int ENOBUFS = 105;
    public const int ENOTCONN = 107;
    public const int ECONNRESET = 104;
    public const int ETIME = 62;
    public const int ECANCELED = 125;
    public const int EINVAL = 22;
    public const int EOPNOTSUPP = 95;

    // Sockets.
    public const int SolSocket = 1;
    public const int SoLinger = 13;
    public const int SoReusePort = 15;
    public const int IpProtoTcp = 6;
    public const int TcpNoDelay = 1;
    public const int TcpInfo = 11;
    public const int ShutRead = 0;
    public const int ShutWrite = 1;
    public const int MsgNoSignal = 0x4000;
    public const int MsgDontWait = 0x40;
    public const int SockCloexec = 0x80000;
    public const int EfdCloexec = 0x80000;
    public const int EfdNonblock = 0x800;

    /// <summary>One submission queue entry (64 bytes).</summary>
    [StructLayout(LayoutKind.Explicit, Size = 64)]
    public struct Sqe
    {
        [FieldOffset(0)] public byte Opcode;
        [FieldOffset(1)] public byte Flags;
        [FieldOffset(2)] public ushort IoPriority;
        [FieldOffset(4)] public int Fd;
        [FieldOffset(8)] public ulong Offset;
        [FieldOffset(16)] public ulong Address;
        [FieldOffset(24)] public uint Length;
        [FieldOffset(28)] public uint OperationFlags;
        [FieldOffset(32)] public ulong UserData;
        [FieldOffset(40)] public ushort BufferGroup;
        [FieldOffset(42)] public ushort Personality;
        [FieldOffset(44)] public int FileIndex;
        [FieldOffset(48)] public ulong Address3;
        [FieldOffset(56)] public ulong Pad;
    }

    /// <summary>One completion queue entry (16 bytes).</summary>
    [StructLayout(LayoutKind.Sequential)]
    public struct Cqe
    {
        public ulong UserData;
        public int Result;
        public uint Flags;
    }

    [StructLayout(LayoutKind.Sequential)]
    public struct SqRingOffsets
    {
        public uint Head;
        public uint Tail;
        public uint RingMask;
        public uint RingEntries;
        public uint Flags;
        public uint Dropped;
        public uint Array;
        public uint Reserved1;
        public ulong UserAddress;
    }

    [StructLayout(LayoutKind.Sequential)]
    public struct CqRingOffsets
    {
        public uint Head;
        public uint Tail;
        public uint RingMask;
        public uint RingEntries;
        public uint Overflow;
        public uint Cqes;
        public uint Flags;
        public uint Reserved1;
        public ulong UserAddress;
    }

    /// <summary><c>struct io_uring_params</c> (120 bytes).</summary>
    [StructLayout(LayoutKind.Sequential)]
    public struct Params
    {
        public uint SqEntries;
        public uint CqEntries;
        public uint Flags;
        public uint SqThreadCpu;
        public uint SqThreadIdle;
        public uint Features;
        public uint WqFd;
        public uint Reserved0;
        public uint Reserved1;
        public uint Reserved2;
        public SqRingOffsets SqOffsets;
        public CqRingOffsets CqOffsets;
    }

    /// <summary><c>struct io_uring_buf</c>: one provided buffer (16 bytes); the ring's tail overlays the first entry's last field.</summary>
    [StructLayout(LayoutKind.Sequential)]
    public struct ProvidedBuffer
    {
        public ulong Address;
        public uint Length;
        public ushort BufferId;
        public ushort Reserved;
    }

    /// <summary><c>struct io_uring_buf_reg</c>.</summary>
    [StructLayout(LayoutKind.Sequential)]
    public struct BufferRingRegistration
    {
        public ulong RingAddress;
        public uint RingEntries;
        public ushort GroupId;
        public ushort Pad;
        public ulong Reserved0;
        public ulong Reserved1;
        public ulong Reserved2;
    }

    /// <summary>
    /// <c>struct io_uring_getevents_arg</c> (24 bytes): no signal mask and no timeout here; <see cref="MinWaitMicroseconds"/>
    /// (Linux 6.12, <c>IORING_FEAT_MIN_TIMEOUT</c>) lets a wait for several completions return once that long has passed with at
    /// least one ready.
    /// </summary>
    [StructLayout(LayoutKind.Sequential)]
    public struct GetEventsArgument
    {
        public ulong SignalMask;
        public uint SignalMaskSize;
        public uint MinWaitMicroseconds;
        public ulong Timeout;
    }

    /// <summary><c>struct __kernel_timespec</c>.</summary>
    [StructLayout(LayoutKind.Sequential)]
    public struct KernelTimespec
    {
        public long Seconds;
        public long Nanoseconds;
    }

    [StructLayout(LayoutKind.Sequential)]
    public struct Linger
    {
        public int OnOff;
        public int Seconds;
    }

    [LibraryImport(Libc, EntryPoint = "syscall", SetLastError = true)]
    private static partial int SyscallSetup(long number, uint entries, Params* parameters);

    [LibraryImport(Libc, EntryPoint = "sendmsg", SetLastError = true)]
    private static partial nint SendMessageCall(int fd, MessageHeader* header, int flags);

    /// <summary><c>sendmsg(2)</c> without waiting (<c>MSG_DONTWAIT | MSG_NOSIGNAL</c>): the bytes sent, or a negated errno.</summary>
    public static nint SendMessageNow(int fd, MessageHeader* header)
    {
        nint result = SendMessageCall(fd, header, MsgDontWait | MsgNoSignal);
        return result >= 0 ? result : -Marshal.GetLastPInvokeError();
    }

    [LibraryImport(Libc, EntryPoint = "syscall", SetLastError = true)]
    private static partial int SyscallEnter(long number, int fd, uint toSubmit, uint minComplete, uint flags, void* signals, nuint signalSetSize);

    [LibraryImport(Libc, EntryPoint = "syscall", SetLastError = true)]
    private static partial int SyscallRegister(long number, int fd, uint opcode, void* argument, uint count);

    /// <summary><c>io_uring_setup</c>: the ring's descriptor, or a negated errno.</summary>
    public static int Setup(uint entries, Params* parameters)
    {
        int result = SyscallSetup(SysIoUringSetup, entries, parameters);
        return result >= 0 ? result : -Marshal.GetLastPInvokeError();
    }

    /// <summary><c>io_uring_enter</c>: submissions consumed, or a negated errno.</summary>
    public static int Enter(int fd, uint toSubmit, uint minComplete, uint flags)
    {
        int result = SyscallEnter(SysIoUringEnter, fd, toSubmit, minComplete, flags, null, 0);
        return result >= 0 ? result : -Marshal.GetLastPInvokeError();
    }

    /// <summary><c>io_uring_enter</c> with <c>IORING_ENTER_EXT_ARG</c>: submissions consumed, or a negated errno.</summary>
    public static int Enter(int fd, uint toSubmit, uint minComplete, uint flags, GetEventsArgument* argument)
    {
        int result = SyscallEnter(SysIoUringEnter, fd, toSubmit, minComplete, flags | EnterExtArg, argument, (nuint)sizeof(GetEventsArgument));
        return result >= 0 ? result : -Marshal.GetLastPInvokeError();
    }

    /// <summary><c>io_uring_register</c>: 0 or a negated errno.</summary>
    public static int Register(int fd, uint opcode, void* argument, uint count)
    {
        int result = SyscallRegister(SysIoUringRegister, fd, opcode, argument, count);
        return result >= 0 ? result : -Marshal.GetLastPInvokeError();
    }

    [LibraryImport(Libc, EntryPoint = "mmap", SetLastError = true)]
    public static partial nint Mmap(nint address, nuint length, int protection, int flags, int fd, long offset);

    [LibraryImport(Libc, EntryPoint = "munmap", SetLastError = true)]
    public static partial int Munmap(nint address, nuint length);

    [LibraryImport(Libc, EntryPoint = "clock_gettime")]
    private static partial int ClockGetTime(int clock, KernelTimespec* time);

    /// <summary>The calling thread's CPU time (user and system) in nanoseconds (<c>CLOCK_THREAD_CPUTIME_ID</c>); 0 if it cannot be read.</summary>
    public static long ThreadCpuNanoseconds()
    {
        const int ClockThreadCpuTime = 3;
        KernelTimespec time;
        return ClockGetTime(ClockThreadCpuTime, &time) == 0 ? (time.Seconds * 1_000_000_000) + time.Nanoseconds : 0;
    }

    [LibraryImport(Libc, EntryPoint = "eventfd", SetLastError = true)]
    public static partial int EventFd(uint initialValue, int flags);

    [LibraryImport(Libc, EntryPoint = "write", SetLastError = true)]
    public static partial nint Write(int fd, void* buffer, nuint count);

    [LibraryImport(Libc, EntryPoint = "close", SetLastError = true)]
    public static partial int Close(int fd);

    [LibraryImport(Libc, EntryPoint = "shutdown", SetLastError = true)]
    public static partial int Shutdown(int fd, int how);

    [LibraryImport(Libc, EntryPoint = "accept4", SetLastError = true)]
    public static partial int Accept4(int fd, void* address, uint* addressLength, int flags);

    [LibraryImport(Libc, EntryPoint = "dup", SetLastError = true)]
    public static partial int Duplicate(int fd);

    [LibraryImport(Libc, EntryPoint = "setsockopt", SetLastError = true)]
    public static partial int SetSocketOption(int fd, int level, int name, void* value, uint length);

    [LibraryImport(Libc, EntryPoint = "getsockopt", SetLastError = true)]
    public static partial int GetSocketOption(int fd, int level, int name, void* value, uint* length);

    [LibraryImport(Libc, EntryPoint = "getsockname", SetLastError = true)]
    public static partial int GetSockName(int fd, byte* address, uint* length);

    [LibraryImport(Libc, EntryPoint = "getpeername", SetLastError = true)]
    public static partial int GetPeerName(int fd, byte* address, uint* length);

    [LibraryImport(Libc, EntryPoint = "strerror")]
    private static partial byte* StrError(int error);

    [LibraryImport(Libc, EntryPoint = "uname")]
    public static partial int Uname(byte* buffer);

    /// <summary>Resets the connection when it is closed (SO_LINGER on, 0 seconds): the peer reads RST instead of FIN.</summary>
    public static void SetResetOnClose(int fd)
    {
        var linger = new Linger { OnOff = 1, Seconds = 0 };
        SetSocketOption(fd, SolSocket, SoLinger, &linger, (uint)sizeof(Linger));
    }

    /// <summary>Turns Nagle's algorithm off on a TCP socket (a listening one: the connections it accepts inherit it).</summary>
    public static void SetNoDelay(int fd)
    {
        int one = 1;
        SetSocketOption(fd, IpProtoTcp, TcpNoDelay, &one, sizeof(int));
    }

    /// <summary>Closes <paramref name="fd"/> with a reset, at once (connections refused at accept).</summary>
    public static void CloseWithReset(int fd)
    {
        SetResetOnClose(fd);
        Close(fd);
    }

    /// <summary>The C library's text of <paramref name="errno"/>, e.g. <c>Connection reset by peer</c>.</summary>
    public static string ErrorText(int errno) => Marshal.PtrToStringUTF8((nint)StrError(errno)) ?? string.Empty;

    /// <summary>The symbolic name of the errno values the transport reports; the number otherwise.</summary>
    public static string ErrorName(int errno) => errno switch
    {
        EPERM => "EPERM",
        ENOENT => "ENOENT",
        EINTR => "EINTR",
        EBADF => "EBADF",
        EAGAIN => "EAGAIN",
        ENOMEM => "ENOMEM",
        EBUSY => "EBUSY",
        EINVAL => "EINVAL",
        ENFILE => "ENFILE",
        EMFILE => "EMFILE",
        EPIPE => "EPIPE",
        ENOSYS => "ENOSYS",
        EBADR => "EBADR",
        ETIME => "ETIME",
        EOPNOTSUPP => "EOPNOTSUPP",
        ECONNRESET => "ECONNRESET",
        ENOBUFS => "ENOBUFS",
        ENOTCONN => "ENOTCONN",
        EALREADY => "EALREADY",
        ECANCELED => "ECANCELED",
        110 => "ETIMEDOUT",
        111 => "ECONNREFUSED",
        113 => "EHOSTUNREACH",
        _ => "errno " + errno.ToString(System.Globalization.CultureInfo.InvariantCulture),
    };
}

/// <summary>An io_uring operation or system call of the io_uring transport failed; <see cref="ErrorName"/> names the errno (e.g. <c>ECONNRESET</c>).</summary>
public sealed class IoUringException : System.IO.IOException
{
    internal IoUringException(string call, int errno)
        : base($"{call} failed: {IoUringNative.ErrorName(errno)} ({IoUringNative.ErrorText(errno)}).", errno)
    {
        Call = call;
        Errno = errno;
        ErrorName = IoUringNative.ErrorName(errno);
    }

    /// <summary>The operation or system call that failed.</summary>
    public string Call { get; }

    /// <summary>The (positive) errno value.</summary>
    public int Errno { get; }

    /// <summary>The errno's symbolic name, e.g. <c>ECONNRESET</c>.</summary>
    public string ErrorName { get; }
}
