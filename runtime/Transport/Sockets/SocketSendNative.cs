using System;
using System.Runtime.InteropServices;

namespace Falconet.Transport.Sockets;

/// <summary>The gathered <c>sendmsg</c> the sockets transport makes itself on Linux, with its iovec array on the caller's stack.</summary>
/// <remarks>
/// .NET's own gathered send pins every buffer with a GCHandle and allocates the handle and iovec arrays per call above
/// eight buffers; the transport's blocks live on the pinned object heap already, so their addresses go into the vector as
/// they are. A full send buffer (EAGAIN) and every other failure leave the send to the socket's own calls, which wait for
/// room and map errors as for any call.
/// </remarks>
internal static unsafe partial class SocketSendNative
{
    /// <summary>Linux's IOV_MAX: the most buffers one call takes.</summary>
    internal const int MaxVectors = 1024;

    /// <summary>EINTR.</summary>
    internal const int Interrupted = 4;

    private const int DontWait = 0x40;
    private const int NoSignal = 0x4000;

    /// <summary>True where the call is made: 64-bit Linux. Elsewhere every send goes through the socket's own calls.</summary>
    internal static readonly bool IsSupported = OperatingSystem.IsLinux() && IntPtr.Size == 8;

    /// <summary>One non-blocking gathered send; the bytes the kernel took, or -1 with the errno in <paramref name="errno"/>.</summary>
    internal static nint Send(nint socket, IoVector* vectors, int count, out int errno)
    {
        MessageHeader header = default;
        header.Vectors = vectors;
        header.VectorCount = (nuint)count;
        nint sent = SendMessage(socket, &header, DontWait | NoSignal);
        errno = sent < 0 ? Marshal.GetLastPInvokeError() : 0;
        return sent;
    }

    [LibraryImport("libc", EntryPoint = "sendmsg", SetLastError = true)]
    private static partial nint SendMessage(nint socket, MessageHeader* header, int flags);
}
