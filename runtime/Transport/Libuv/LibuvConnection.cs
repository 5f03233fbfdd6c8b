using System;
using System.Buffers;
using System.Net;
using System.Runtime.InteropServices;
using System.Threading;
using Falconet.Buffers;

namespace Falconet.Transport.Libuv;

/// <summary>A TCP connection owned by one libuv loop: its reads, writes and close all happen on that loop's thread.</summary>
/// <remarks>
/// <para>
/// Reads: while a receive is pending the stream is reading, and libuv's allocation callback hands out the receive's
/// own memory (a pool block), so bytes land where the parser reads them. A read completes the receive on the loop
/// thread and, with <see cref="IoScheduling.IoThreads"/>, runs the connection's code inline: it parses, runs a
/// handler that completes synchronously, writes, and asks for the next receive before the callback returns, so
/// the stream keeps reading. When no receive is pending after a read, reading stops until one is.
/// </para>
/// <para>
/// Writes: a send tries <c>uv_try_write</c> with one buffer per block and completes synchronously when the kernel
/// took everything; what is left goes to <c>uv_write</c>, whose callback completes the send. The HTTP layer sends one
/// batch at a time and waits for it, which bounds the bytes in flight per connection.
/// </para>
/// <para>
/// Calls from other threads (a handler that completed asynchronously, a timer, shutdown) are recorded as flags and
/// the connection is queued once on its loop, which performs them in a fixed order (<see cref="LoopConnection"/>).
/// </para>
/// </remarks>
internal sealed unsafe partial class LibuvConnection : LoopConnection
{
    private const int StackBuffers = 32;

    private readonly LibuvLoop _loop;
    private void* _handle;
    private void* _writeRequest;
    private GCHandle _self;

    private LibuvNative.Buffer* _buffers;
    private int _bufferCapacity;

    private readonly bool _isPipe;
    private bool _reading;
    private bool _handleClosed;
    private bool _shutdownPending;
    private bool _sendShutDown;
    private bool _writeRestAtOnce;

    /// <summary>Wraps an accepted handle on its loop: a TCP handle, or a pipe when <paramref name="unixEndPoint"/> (the listener's Unix domain socket endpoint) is set.</summary>
    /// <param name="loop">The loop that owns the connection.</param>
    /// <param name="handle">The accepted handle.</param>
    /// <param name="noDelay">Whether to turn Nagle's algorithm off (TCP only).</param>
    /// <param name="scheduling">Where the connection's code continues.</param>
    /// <param name="unixEndPoint">The listener's Unix domain socket endpoint when <paramref name="handle"/> is a pipe; null for TCP.</param>
    public LibuvConnection(LibuvLoop loop, void* handle, bool noDelay, IoScheduling scheduling, EndPoint? unixEndPoint = null)
        : base(scheduling)
    {
        _loop = loop;
        _handle = handle;
        _isPipe = unixEndPoint is not null;
        _self = GCHandle.Alloc(this);
        LibuvNative.SetData(handle, GCHandle.ToIntPtr(_self));
        _writeRequest = NativeMemory.AllocZeroed(LibuvNative.RequestSize(LibuvNative.RequestTypeWrite));
        LibuvNative.SetData(_writeRequest, GCHandle.ToIntPtr(_self));
        if (_isPipe)
        {
            // A Unix domain socket: no Nagle to turn off, and a peer without an address.
            LocalEndPoint = unixEndPoint;
            Interlocked.Increment(ref loop.OpenConnections);
            Interlocked.Increment(ref loop.AcceptedConnections);
            return;
        }

        if (noDelay)
        {
            LibuvNative.TcpNoDelay(handle, 1);
        }

        byte* address = stackalloc byte[128];
        int length = 128;
        if (LibuvNative.TcpGetSockName(handle, address, &length) == 0)
        {
            LocalEndPoint = SocketAddressBytes.Read(new ReadOnlySpan<byte>(address, length));
        }

        length = 128;
        if (LibuvNative.TcpGetPeerName(handle, address, &length) == 0)
        {
            RemoteEndPoint = SocketAddressBytes.Read(new ReadOnlySpan<byte>(address, length));
        }

        Interlocked.Increment(ref loop.OpenConnections);
        Interlocked.Increment(ref loop.AcceptedConnections);
    }

    public override EndPoint? LocalEndPoint { get; }

    public override EndPoint? RemoteEndPoint { get; }

    public override SlabMemoryPool Pool => _loop.Pool;

    /// <summary>The loop that owns the connection.</summary>
    internal LibuvLoop Loop => _loop;

    /// <summary>Reads TCP_NODELAY back from the socket (diagnostics and tests); false once the handle is closed.</summary>
    internal bool IsNoDelay
    {
        get
        {
            nint fd;
            void* handle = _handle;
            if (handle is null || LibuvNative.FileNo(handle, &fd) != 0)
            {
                return false;
            }

            int value = 0;
            uint length = sizeof(int);
            return LibuvNative.GetSocketOption((int)fd, LibuvNative.IpProtoTcp, LibuvNative.TcpNoDelayOption, &value, &length) == 0 && value != 0;
        }
    }

    private protected override bool IsLoopThread => _loop.IsLoopThread;

    private protected override void Post(IThreadPoolWorkItem item) => _loop.Post(item);

    private protected override bool TrySendAtOnce(ref ReadOnlySequence<byte> buffers, out Exception? error)
    {
        // Everything the kernel takes now; the rest goes to uv_write, without a second try.
        int written = TryWriteOnLoop(buffers, out error);
        if (error is not null || written == buffers.Length)
        {
            return true;
        }

        buffers = buffers.Slice(written);
        _writeRestAtOnce = true;
        return false;
    }
}
