using System;
using System.Net;
using System.Net.Sockets;
using System.Runtime.InteropServices;
using System.Threading;
using System.Threading.Tasks;
using Falconet.Diagnostics;
using Microsoft.Extensions.Logging;

namespace Falconet.Transport.Libuv;

/// <summary>
/// A bound endpoint of the libuv transport: with <see cref="LibuvDistribution.ReusePort"/> one listening socket per
/// loop, with <see cref="LibuvDistribution.Handoff"/> one on loop 0 that hands connections to the others.
/// </summary>
/// <remarks>
/// Accepted connections are made on their loop and queued for <see cref="AcceptAsync"/>; the server then schedules
/// each back onto its loop, where it stays. Connections still queued when the listener is unbound are handed out all the
/// same; one never taken is reset when the listener is disposed.
/// </remarks>
internal sealed class LibuvConnectionListener : IConnectionListener
{
    private readonly AcceptQueue _accepted = new();

    private readonly LibuvTransportFactory _factory;
    private LibuvListenSocket[] _sockets = Array.Empty<LibuvListenSocket>();
    private int _unbound;
    private uint _nextLoop;

    public LibuvConnectionListener(LibuvTransportFactory factory, EndPoint endpoint)
    {
        _factory = factory;
        EndPoint = endpoint;
    }

    public EndPoint EndPoint { get; private set; }

    internal bool IsUnbound => Volatile.Read(ref _unbound) != 0;

    /// <summary>
    /// Opens the listening sockets, each on its loop's thread: for an <see cref="IPEndPoint"/> one socket per loop with
    /// SO_REUSEPORT (port 0 is resolved by the first and reused by the others); for a Unix domain socket or an adopted socket,
    /// one handle per loop over a duplicate of the one descriptor, all accepting from its one queue.
    /// </summary>
    public async Task BindAsync(EndPoint endpoint)
    {
        LibuvLoop[] loops = _factory.Loops;
        int count = _factory.Options.Distribution == LibuvDistribution.ReusePort ? loops.Length : 1;
        bool reusePort = _factory.Options.ReusePort || (_factory.Options.Distribution == LibuvDistribution.ReusePort && loops.Length > 1);
        var sockets = new LibuvListenSocket[count];
        int descriptor = -1;
        try
        {
            if (endpoint is IPEndPoint ip)
            {
                IPEndPoint bound = ip;
                for (int i = 0; i < count; i++)
                {
                    var socket = new LibuvListenSocket(this, loops[i]);
                    sockets[i] = socket;
                    bound = await socket.OpenAsync(bound, reusePort, _factory.Options.Backlog).ConfigureAwait(false);
                }

                EndPoint = bound;
            }
            else
            {
                descriptor = ListenSockets.Open(endpoint, _factory.Options.Backlog, out EndPoint local);
                bool pipe = local is UnixDomainSocketEndPoint;
                for (int i = 0; i < count; i++)
                {
                    var socket = new LibuvListenSocket(this, loops[i]);
                    sockets[i] = socket;
                    await socket.OpenDescriptorAsync(ListenSockets.Duplicate(descriptor), pipe ? local : null, _factory.Options.Backlog).ConfigureAwait(false);
                }

                EndPoint = local;
            }

            _sockets = sockets;
        }
        catch
        {
            foreach (LibuvListenSocket? socket in sockets)
            {
                if (socket is not null)
                {
                    await socket.CloseAsync().ConfigureAwait(false);
                }
            }

            throw;
        }
        finally
        {
            // Every loop holds its own duplicate.
            ListenSockets.CloseDescriptor(descriptor);
        }
    }

    public ValueTask<TransportConnection?> AcceptAsync(CancellationToken ct = default) => _accepted.AcceptAsync(ct);

    /// <summary>
    /// Closes the listening handles; connections the loops accepted before are still handed out by <see cref="AcceptAsync"/>
    /// (their clients connected and may have sent a request), then it returns null.
    /// </summary>
    public async ValueTask UnbindAsync()
    {
        if (Interlocked.Exchange(ref _unbound, 1) != 0)
        {
            return;
        }

        foreach (LibuvListenSocket socket in _sockets)
        {
            await socket.CloseAsync().ConfigureAwait(false);
        }

        _accepted.Complete();
    }

    public async ValueTask DisposeAsync()
    {
        await UnbindAsync().ConfigureAwait(false);

        // Accepted but never taken: nobody else will close them.
        await _accepted.CloseAsync().ConfigureAwait(false);
    }

    /// <summary>The loop the next connection goes to (<see cref="LibuvDistribution.Handoff"/>).</summary>
    internal LibuvLoop NextLoop()
    {
        LibuvLoop[] loops = _factory.Loops;
        uint next = _nextLoop++;
        return loops[next % (uint)loops.Length];
    }

    internal bool NoDelay => _factory.Options.NoDelay;

    internal IoScheduling Scheduling => _factory.Options.Scheduling;

    internal LibuvDistribution Distribution => _factory.Options.Distribution;

    /// <summary>True when the transport has <see cref="LibuvTransportOptions.MaxConnections"/> open: the next accepted is reset.</summary>
    internal bool IsFull => _factory.OpenConnections >= _factory.Options.MaxConnections;

    /// <summary>Counts a connection reset at accept.</summary>
    internal void CountRefused()
    {
        _factory.CountRefused();
        ServerMetrics.Count(ServerMetrics.RejectedConnections, ServerMetrics.ConnectionLimitReason);
    }

    /// <summary>Queues a connection made on its loop thread for <see cref="AcceptAsync"/>; resets it when the listener is unbound.</summary>
    internal void OnAccepted(LibuvConnection connection) => _accepted.Add(connection);
}

/// <summary>One listening TCP handle on one loop.</summary>
internal sealed unsafe class LibuvListenSocket
{
    private readonly LibuvConnectionListener _listener;
    private readonly LibuvLoop _loop;
    private readonly TaskCompletionSource _closed = new(TaskCreationOptions.RunContinuationsAsynchronously);
    private void* _handle;
    private GCHandle _self;
    private bool _closing;
    private int _reserve = -1;
    private bool _shedding;
    private bool _acceptFailing;

    // The listener's Unix domain socket endpoint when this handle is a pipe (its connections are pipes too); null for TCP.
    private EndPoint? _unixEndPoint;

    public LibuvListenSocket(LibuvConnectionListener listener, LibuvLoop loop)
    {
        _listener = listener;
        _loop = loop;
    }

    /// <summary>Creates, binds and starts the handle on the loop thread; returns the bound endpoint.</summary>
    public Task<IPEndPoint> OpenAsync(IPEndPoint endpoint, bool reusePort, int backlog)
    {
        var opened = new TaskCompletionSource<IPEndPoint>(TaskCreationOptions.RunContinuationsAsynchronously);
        _loop.Post(new LoopAction(() =>
        {
            try
            {
                opened.SetResult(OpenOnLoop(endpoint, reusePort, backlog));
            }
            catch (Exception exception)
            {
                opened.SetException(exception);
            }
        }));
        return opened.Task;
    }

    private IPEndPoint OpenOnLoop(IPEndPoint endpoint, bool reusePort, int backlog)
    {
        _handle = NativeMemory.AllocZeroed(LibuvNative.HandleSize(LibuvNative.HandleTypeTcp));
        uint family = endpoint.AddressFamily == System.Net.Sockets.AddressFamily.InterNetworkV6 ? (uint)LibuvNative.AddressFamilyInet6 : LibuvNative.AddressFamilyInet;
        int init = LibuvNative.TcpInitEx(_loop.Handle, _handle, family);
        if (init < 0)
        {
            NativeMemory.Free(_handle);
            _handle = null;
            throw new LibuvException("uv_tcp_init_ex", init);
        }

        _self = GCHandle.Alloc(this);
        LibuvNative.SetData(_handle, GCHandle.ToIntPtr(_self));
        try
        {
            if (reusePort)
            {
                nint fd;
                LibuvNative.Check(LibuvNative.FileNo(_handle, &fd), "uv_fileno");
                int one = 1;
                if (LibuvNative.SetSocketOption((int)fd, LibuvNative.SolSocket, LibuvNative.SoReusePort, &one, sizeof(int)) != 0)
                {
                    throw new LibuvException("setsockopt(SO_REUSEPORT)", -Marshal.GetLastPInvokeError());
                }
            }

            byte* address = stackalloc byte[28];
            SocketAddressBytes.Write(endpoint, new Span<byte>(address, 28));
            LibuvNative.Check(LibuvNative.TcpBind(_handle, address, 0), "uv_tcp_bind");
            LibuvNative.Check(LibuvNative.Listen(_handle, backlog, &OnConnection), "uv_listen");
            TakeReserve();

            byte* bound = stackalloc byte[128];
            int length = 128;
            LibuvNative.Check(LibuvNative.TcpGetSockName(_handle, bound, &length), "uv_tcp_getsockname");
            return SocketAddressBytes.Read(new ReadOnlySpan<byte>(bound, length)) ?? endpoint;
        }
        catch
        {
            CloseOnLoop();
            throw;
        }
    }

    /// <summary>
    /// Listens, on the loop thread, on <paramref name="fd"/>: a duplicate of a listening socket this handle now owns (a pipe
    /// handle when <paramref name="unixEndPoint"/> is set, else TCP).
    /// </summary>
    public Task OpenDescriptorAsync(int fd, EndPoint? unixEndPoint, int backlog)
    {
        var opened = new TaskCompletionSource(TaskCreationOptions.RunContinuationsAsynchronously);
        _loop.Post(new LoopAction(() =>
        {
            try
            {
                OpenDescriptorOnLoop(fd, unixEndPoint, backlog);
                opened.SetResult();
            }
            catch (Exception exception)
            {
                opened.SetException(exception);
            }
        }));
        return opened.Task;
    }

    private void OpenDescriptorOnLoop(int fd, EndPoint? unixEndPoint, int backlog)
    {
        _unixEndPoint = unixEndPoint;
        bool pipe = unixEndPoint is not null;
        _handle = NativeMemory.AllocZeroed(LibuvNative.HandleSize(pipe ? LibuvNative.HandleTypeNamedPipe : LibuvNative.HandleTypeTcp));
        int init = pipe ? LibuvNative.PipeInit(_loop.Handle, _handle, 0) : LibuvNative.TcpInit(_loop.Handle, _handle);
        if (init < 0)
        {
            NativeMemory.Free(_handle);
            _handle = null;
            LibuvNative.CloseDescriptor(fd);
            throw new LibuvException(pipe ? "uv_pipe_init" : "uv_tcp_init", init);
        }

        _self = GCHandle.Alloc(this);
        LibuvNative.SetData(_handle, GCHandle.ToIntPtr(_self));
        int open = pipe ? LibuvNative.PipeOpen(_handle, fd) : LibuvNative.TcpOpen(_handle, fd);
        if (open < 0)
        {
            LibuvNative.CloseDescriptor(fd);
            CloseOnLoop();
            throw new LibuvException(pipe ? "uv_pipe_open" : "uv_tcp_open", open);
        }

        try
        {
            // listen() again on a listening socket only sets the backlog.
            LibuvNative.Check(LibuvNative.Listen(_handle, backlog, &OnConnection), "uv_listen");
            TakeReserve();
        }
        catch
        {
            CloseOnLoop();
            throw;
        }
    }

    /// <summary>Closes the handle on its loop thread; completes once libuv released it.</summary>
    public Task CloseAsync()
    {
        _loop.Post(new LoopAction(CloseOnLoop));
        return _closed.Task;
    }

    /// <summary>Closes the handle; call on the loop thread.</summary>
    public void CloseOnLoop()
    {
        if (_handle is null)
        {
            _closed.TrySetResult();
            return;
        }

        if (_closing)
        {
            return;
        }

        _closing = true;
        if (_reserve >= 0)
        {
            LibuvNative.CloseDescriptor(_reserve);
            _reserve = -1;
        }

        LibuvNative.Close(_handle, &OnClosed);
    }

    [UnmanagedCallersOnly]
    private static void OnClosed(void* handle)
    {
        var socket = (LibuvListenSocket)GCHandle.FromIntPtr(LibuvNative.GetData(handle)).Target!;
        socket._self.Free();
        socket._handle = null;
        NativeMemory.Free(handle);
        socket._closed.TrySetResult();
    }

    [UnmanagedCallersOnly]
    private static void OnConnection(void* server, int status)
    {
        var socket = (LibuvListenSocket)GCHandle.FromIntPtr(LibuvNative.GetData(server)).Target!;
        try
        {
            socket.Accept(status);
        }
        catch (Exception exception)
        {
            LibuvLog.CallbackFailed(socket._loop.Logger, socket._loop.Index, exception);
        }
    }

    private void Accept(int status)
    {
        if (status < 0)
        {
            if (status is LibuvNative.EMFILE or LibuvNative.ENFILE && _reserve >= 0)
            {
                // Out of descriptors. libuv accepts again as soon as this returns, and would call back at once, forever,
                // with the loop's connections unserved: the reserve freed here takes the waiting connection, which is reset
                // (shed) to take the reserve back. libuv's own spare descriptor is not enough: other threads take it.
                LibuvNative.CloseDescriptor(_reserve);
                _reserve = -1;
                _shedding = true;
                return;
            }

            // Logged once until an accept succeeds: without a reserve libuv retries at once.
            if (!_acceptFailing)
            {
                _acceptFailing = true;
                LibuvLog.AcceptFailed(_loop.Logger, _loop.Index, LibuvNative.ErrorName(status), LibuvNative.ErrorText(status));
            }

            return;
        }

        _acceptFailing = false;
        if (_closing)
        {
            return;
        }

        bool pipe = _unixEndPoint is not null;
        void* client = NativeMemory.AllocZeroed(LibuvNative.HandleSize(pipe ? LibuvNative.HandleTypeNamedPipe : LibuvNative.HandleTypeTcp));
        int result = pipe ? LibuvNative.PipeInit(_loop.Handle, client, 0) : LibuvNative.TcpInit(_loop.Handle, client);
        if (result < 0)
        {
            NativeMemory.Free(client);
            LibuvLog.AcceptFailed(_loop.Logger, _loop.Index, LibuvNative.ErrorName(result), LibuvNative.ErrorText(result));
            return;
        }

        result = LibuvNative.Accept(_handle, client);
        if (result < 0)
        {
            LibuvNative.SetData(client, 0);
            LibuvNative.Close(client, &LibuvConnection.OnOrphanClosed);
            LibuvLog.AcceptFailed(_loop.Logger, _loop.Index, LibuvNative.ErrorName(result), LibuvNative.ErrorText(result));
            return;
        }

        if (_shedding || _listener.IsFull)
        {
            // Reset before anything is made for it: closing frees the descriptor at once.
            LibuvNative.SetData(client, 0);
            if (pipe || LibuvNative.TcpCloseReset(client, &LibuvConnection.OnOrphanClosed) != 0)
            {
                LibuvNative.Close(client, &LibuvConnection.OnOrphanClosed);
            }

            _shedding = false;
            _listener.CountRefused();
            if (_reserve < 0)
            {
                TakeReserve();
            }

            return;
        }

        if (_reserve < 0)
        {
            TakeReserve();
        }

        LibuvLoop owner = _loop;
        if (_listener.Distribution == LibuvDistribution.Handoff)
        {
            owner = _listener.NextLoop();
        }

        if (owner == _loop)
        {
            _listener.OnAccepted(new LibuvConnection(_loop, client, _listener.NoDelay, _listener.Scheduling, _unixEndPoint));
            return;
        }

        // Hand the socket to its loop: a duplicate descriptor survives the close of this loop's handle.
        nint fd;
        int duplicate = LibuvNative.FileNo(client, &fd) == 0 ? LibuvNative.Duplicate((int)fd) : -1;
        LibuvNative.SetData(client, 0);
        LibuvNative.Close(client, &LibuvConnection.OnOrphanClosed);
        if (duplicate < 0)
        {
            LibuvLog.AcceptFailed(_loop.Logger, _loop.Index, "dup", Marshal.GetLastPInvokeErrorMessage());
            return;
        }

        owner.Post(new HandoffWorkItem(_listener, owner, duplicate, _unixEndPoint));
    }

    /// <summary>Keeps a spare descriptor (a duplicate of the listening socket's) to free when accepting runs out of them.</summary>
    private void TakeReserve()
    {
        nint fd;
        if (_handle is not null && LibuvNative.FileNo(_handle, &fd) == 0)
        {
            _reserve = LibuvNative.Duplicate((int)fd);
        }
    }

    /// <summary>Opens a handed-off descriptor as a connection of its new loop.</summary>
    private sealed class HandoffWorkItem(LibuvConnectionListener listener, LibuvLoop loop, int fd, EndPoint? unixEndPoint) : IThreadPoolWorkItem
    {
        public void Execute()
        {
            if (!loop.IsLoopThread)
            {
                // The loop stopped before it could take the socket.
                LibuvNative.CloseDescriptor(fd);
                return;
            }

            bool pipe = unixEndPoint is not null;
            void* client = NativeMemory.AllocZeroed(LibuvNative.HandleSize(pipe ? LibuvNative.HandleTypeNamedPipe : LibuvNative.HandleTypeTcp));
            int result = pipe ? LibuvNative.PipeInit(loop.Handle, client, 0) : LibuvNative.TcpInit(loop.Handle, client);
            if (result < 0)
            {
                NativeMemory.Free(client);
                LibuvNative.CloseDescriptor(fd);
                LibuvLog.AcceptFailed(loop.Logger, loop.Index, LibuvNative.ErrorName(result), LibuvNative.ErrorText(result));
                return;
            }

            result = pipe ? LibuvNative.PipeOpen(client, fd) : LibuvNative.TcpOpen(client, fd);
            if (result < 0)
            {
                LibuvNative.CloseDescriptor(fd);
                LibuvNative.SetData(client, 0);
                LibuvNative.Close(client, &LibuvConnection.OnOrphanClosed);
                LibuvLog.AcceptFailed(loop.Logger, loop.Index, LibuvNative.ErrorName(result), LibuvNative.ErrorText(result));
                return;
            }

            listener.OnAccepted(new LibuvConnection(loop, client, listener.NoDelay, listener.Scheduling, unixEndPoint));
        }
    }
}

