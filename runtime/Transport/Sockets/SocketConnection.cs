using System;
using System.Buffers;
using System.Net;
using System.Net.Sockets;
using System.Threading;
using System.Threading.Tasks;
using Falconet.Buffers;

namespace Falconet.Transport.Sockets;

/// <summary>A TCP connection accepted by the sockets transport, bound to one pool and, with I/O threads, to the lane that owns it.</summary>
internal sealed class SocketConnection : TransportConnection
{
    private const int Open = 0;
    private const int Aborted = 1;
    private const int Disposed = 2;

    private readonly IoLane? _lane;
    private readonly SlabMemoryPool _pool;
    private readonly SocketReceiver _receiver;
    private readonly SocketSender _sender;
    private int _state;
    private int _receiveStopped;

    /// <summary>Wraps an accepted socket; <paramref name="lane"/> is null when completions continue where they happen.</summary>
    public SocketConnection(Socket socket, IoLane? lane, SlabMemoryPool pool)
    {
        Socket = socket;
        _lane = lane;
        _pool = pool;
        LocalEndPoint = socket.LocalEndPoint;
        RemoteEndPoint = socket.RemoteEndPoint;
        _receiver = new SocketReceiver(this, lane);
        _sender = new SocketSender(this, lane);
    }

    internal Socket Socket { get; }

    /// <summary>True once <see cref="Abort"/> or <see cref="DisposeAsync"/> ran.</summary>
    internal bool IsClosedLocally => Volatile.Read(ref _state) != Open;

    public override EndPoint? LocalEndPoint { get; }

    public override EndPoint? RemoteEndPoint { get; }

    public override SlabMemoryPool Pool => _pool;

    public override ValueTask<int> ReceiveAsync(Memory<byte> buffer, CancellationToken ct = default)
    {
        if (ct.IsCancellationRequested)
        {
            return ValueTask.FromCanceled<int>(ct);
        }

        return IsClosedLocally || Volatile.Read(ref _receiveStopped) != 0
            ? new ValueTask<int>(0)
            : _receiver.ReceiveAsync(buffer, ct);
    }

    /// <summary>A zero-byte receive: .NET's sockets complete it once the socket is readable (or closed), with no buffer held meanwhile.</summary>
    internal override bool CanWaitForData => true;

    internal override ValueTask<int> WaitForDataAsync(CancellationToken ct)
    {
        if (ct.IsCancellationRequested)
        {
            return ValueTask.FromCanceled<int>(ct);
        }

        return IsClosedLocally || Volatile.Read(ref _receiveStopped) != 0
            ? new ValueTask<int>(0)
            : _receiver.ReceiveAsync(Memory<byte>.Empty, ct);
    }

    public override ValueTask SendAsync(ReadOnlySequence<byte> buffers, CancellationToken ct = default)
    {
        if (ct.IsCancellationRequested)
        {
            return ValueTask.FromCanceled(ct);
        }

        if (IsClosedLocally)
        {
            return ValueTask.FromException(new ConnectionAbortedException("The connection was aborted or disposed."));
        }

        return _sender.SendAsync(buffers, ct);
    }

    /// <summary>Linux's IOV_MAX where the transport makes its own gathered <c>sendmsg</c> (<see cref="SocketSender"/>); elsewhere what .NET's sockets gather without allocating.</summary>
    public override int MaxGatheredSegments => SocketSender.MaxGatheredSegments;

    public override bool IsOnIoThread => _lane is null || _lane.IsLaneThread;

    internal override bool IsOwnIoThread => _lane is not null && _lane.IsLaneThread;

    public override void Schedule(IThreadPoolWorkItem workItem)
    {
        ArgumentNullException.ThrowIfNull(workItem);
        if (_lane is null)
        {
            ThreadPool.UnsafeQueueUserWorkItem(workItem, preferLocal: false);
        }
        else
        {
            _lane.Schedule(workItem);
        }
    }

    public override void StopReceiving()
    {
        if (Interlocked.Exchange(ref _receiveStopped, 1) != 0 || IsClosedLocally)
        {
            return;
        }

        try
        {
            // shutdown(SHUT_RD): a pending receive wakes and returns what had arrived, or 0; the sending side stays open.
            Socket.Shutdown(SocketShutdown.Receive);
        }
        catch (SocketException)
        {
            // Not connected anymore: a pending receive completes on its own.
        }
        catch (ObjectDisposedException)
        {
            // Closed concurrently: a pending receive completes with 0.
        }
    }

    public override void ShutdownSend()
    {
        if (IsClosedLocally)
        {
            return;
        }

        try
        {
            Socket.Shutdown(SocketShutdown.Send);
        }
        catch (SocketException)
        {
            // The peer is gone already: the close that follows finds out too.
        }
        catch (ObjectDisposedException)
        {
        }
    }

    public override void Abort()
    {
        if (Interlocked.CompareExchange(ref _state, Aborted, Open) != Open)
        {
            return;
        }

        try
        {
            // Linger 0: close sends RST and drops unsent data.
            Socket.LingerState = new LingerOption(true, 0);
        }
        catch (SocketException)
        {
            // Already reset by the peer; closing is all that is left.
        }
        catch (ObjectDisposedException)
        {
        }

        Socket.Dispose();
    }

    public override ValueTask DisposeAsync()
    {
        if (Interlocked.CompareExchange(ref _state, Disposed, Open) == Open)
        {
            try
            {
                Socket.Shutdown(SocketShutdown.Send);
            }
            catch (SocketException)
            {
                // The peer is gone already.
            }

            Socket.Dispose();
        }

        // Closing fails a pending operation; its outcome is still delivered (on the lane, if any). The caller may return
        // the memory it handed to the operation only once that is done.
        ValueTask receive = _receiver.WaitUntilIdleAsync();
        ValueTask send = _sender.WaitUntilIdleAsync();
        if (receive.IsCompletedSuccessfully && send.IsCompletedSuccessfully)
        {
            ReleaseOperations();
            return default;
        }

        return DisposeWhenIdleAsync(receive, send);
    }

    private async ValueTask DisposeWhenIdleAsync(ValueTask receive, ValueTask send)
    {
        await receive.ConfigureAwait(false);
        await send.ConfigureAwait(false);
        ReleaseOperations();
    }

    private void ReleaseOperations()
    {
        _receiver.Dispose();
        _sender.Dispose();
    }
}
