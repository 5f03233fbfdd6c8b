using System;
using System.Net;
using System.Net.Sockets;
using System.Runtime.InteropServices;

namespace Falconet.Transport;

/// <summary>What every transport does the same way with a listening socket: SO_REUSEPORT, and adopting one already listening.</summary>
internal static unsafe partial class ListenSockets
{
    private const int SolSocket = 1;
    private const int SoType = 3;
    private const int SoReusePort = 15;
    private const int SoAcceptConn = 30;
    private const int SoDomain = 39;
    private const int SockStream = 1;
    private const int FdGetFlags = 1;
    private const int FdSetFlags = 2;
    private const int FdCloseOnExec = 1;
    private const int FdDuplicateCloseOnExec = 1030;
    private const int SockCloseOnExec = 0x80000;
    private const ushort AfUnix = 1;
    private const ushort AfInet = 2;
    private const ushort AfInet6 = 10;

    /// <summary>Sets SO_REUSEPORT on a socket before it is bound.</summary>
    /// <exception cref="SocketException">The system refused it.</exception>
    public static void SetReusePort(nint fd)
    {
        int one = 1;
        if (SetSocketOption((int)fd, SolSocket, SoReusePort, &one, sizeof(int)) != 0)
        {
            throw new SocketException(Marshal.GetLastPInvokeError(), "setsockopt(SO_REUSEPORT) failed.");
        }
    }

    /// <summary>
    /// Checks that <paramref name="endpoint"/> is a listening stream socket and returns its address family (Unix, IPv4, IPv6).
    /// The descriptor is marked close-on-exec, so a child process does not keep the socket listening after this one stops.
    /// </summary>
    /// <exception cref="InvalidOperationException">The descriptor is not a listening stream socket; the message names it.</exception>
    public static AddressFamily Check(ListenSocketEndPoint endpoint)
    {
        int fd = (int)endpoint.Handle;
        if (Option(fd, SoType) != SockStream || Option(fd, SoAcceptConn) != 1)
        {
            throw new InvalidOperationException($"The {endpoint} is not a listening stream socket.");
        }

        int flags = Fcntl(fd, FdGetFlags, 0);
        if (flags >= 0)
        {
            Fcntl(fd, FdSetFlags, flags | FdCloseOnExec);
        }

        return Option(fd, SoDomain) switch
        {
            1 => AddressFamily.Unix,
            2 => AddressFamily.InterNetwork,
            10 => AddressFamily.InterNetworkV6,
            int other => throw new InvalidOperationException($"The {endpoint} is of address family {other}, which no transport serves."),
        };
    }

    /// <summary>
    /// A listening descriptor for an endpoint that is not a TCP address: a new Unix domain socket bound to its path and
    /// listening with <paramref name="backlog"/>, or an adopted socket (checked, used as it is). <paramref name="local"/> is the
    /// endpoint it listens on. The caller owns the descriptor.
    /// </summary>
    /// <exception cref="SocketException">The Unix domain socket could not be made, bound (its path exists) or listen.</exception>
    /// <exception cref="InvalidOperationException">An adopted descriptor is not a listening stream socket.</exception>
    public static int Open(EndPoint endpoint, int backlog, out EndPoint local)
    {
        if (endpoint is ListenSocketEndPoint adopted)
        {
            Check(adopted);
            int fd = (int)adopted.Handle;
            local = LocalEndPoint(fd) ?? adopted;
            return fd;
        }

        if (endpoint is not UnixDomainSocketEndPoint unix)
        {
            throw new NotSupportedException($"Not a Unix domain socket or an adopted socket: {endpoint}.");
        }

        SocketAddress address = unix.Serialize();
        int socket = Socket(AfUnix, SockStream | SockCloseOnExec, 0);
        if (socket < 0)
        {
            throw new SocketException(Marshal.GetLastPInvokeError());
        }

        fixed (byte* bytes = address.Buffer.Span)
        {
            if (Bind(socket, bytes, (uint)address.Size) != 0 || Listen(socket, backlog) != 0)
            {
                int error = Marshal.GetLastPInvokeError();
                CloseDescriptor(socket);
                throw new SocketException(error, $"Listening on the Unix domain socket {unix} failed.");
            }
        }

        local = unix;
        return socket;
    }

    /// <summary>A duplicate of <paramref name="fd"/> (close-on-exec), for one more handle over the same socket.</summary>
    public static int Duplicate(int fd)
    {
        int duplicate = Fcntl(fd, FdDuplicateCloseOnExec, 0);
        return duplicate >= 0 ? duplicate : throw new SocketException(Marshal.GetLastPInvokeError(), "Duplicating a listening socket failed.");
    }

    /// <summary>Closes a descriptor (none when negative).</summary>
    public static void CloseDescriptor(int fd)
    {
        if (fd >= 0)
        {
            Close(fd);
        }
    }

    /// <summary>The address a socket is bound to (IPv4, IPv6 or a Unix path); null for anything else.</summary>
    public static EndPoint? LocalEndPoint(int fd)
    {
        byte* address = stackalloc byte[128];
        uint length = 128;
        if (GetSocketName(fd, address, &length) != 0)
        {
            return null;
        }

        var bytes = new ReadOnlySpan<byte>(address, (int)length);
        ushort family = MemoryMarshal.Read<ushort>(bytes);
        switch (family)
        {
            case AfInet:
                return new IPEndPoint(new IPAddress(bytes.Slice(4, 4)), (bytes[2] << 8) | bytes[3]);
            case AfInet6:
                return new IPEndPoint(new IPAddress(bytes.Slice(8, 16), MemoryMarshal.Read<uint>(bytes.Slice(24))), (bytes[2] << 8) | bytes[3]);
            case AfUnix when length > 2:
                ReadOnlySpan<byte> path = bytes[2..];
                int end = path[0] == 0 ? path.Length : path.IndexOf((byte)0);
                return new UnixDomainSocketEndPoint(System.Text.Encoding.UTF8.GetString(path[..(end < 0 ? path.Length : end)]));
            default:
                return null;
        }
    }

    private static int Option(int fd, int name)
    {
        int value = 0;
        uint length = sizeof(int);
        return GetSocketOption(fd, SolSocket, name, &value, &length) == 0 ? value : -1;
    }

    [LibraryImport("libc", EntryPoint = "setsockopt", SetLastError = true)]
    private static partial int SetSocketOption(int fd, int level, int name, int* value, uint length);

    [LibraryImport("libc", EntryPoint = "getsockopt", SetLastError = true)]
    private static partial int GetSocketOption(int fd, int level, int name, int* value, uint* length);

    [LibraryImport("libc", EntryPoint = "fcntl", SetLastError = true)]
    private static partial int Fcntl(int fd, int command, int argument);

    [LibraryImport("libc", EntryPoint = "socket", SetLastError = true)]
    private static partial int Socket(int domain, int type, int protocol);

    [LibraryImport("libc", EntryPoint = "bind", SetLastError = true)]
    private static partial int Bind(int fd, byte* address, uint length);

    [LibraryImport("libc", EntryPoint = "listen", SetLastError = true)]
    private static partial int Listen(int fd, int backlog);

    [LibraryImport("libc", EntryPoint = "getsockname", SetLastError = true)]
    private static partial int GetSocketName(int fd, byte* address, uint* length);

    [LibraryImport("libc", EntryPoint = "close", SetLastError = true)]
    private static partial int Close(int fd);
}
