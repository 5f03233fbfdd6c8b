using System;
using System.Buffers;
using System.Net;
using System.Runtime.InteropServices;
using System.Threading;
using Falconet.Buffers;
using static Falconet.Transport.IoUring.IoUringNative;

namespace Falconet.Transport.IoUring;

/// <summary>A TCP connection owned by one io_uring loop: its receives, sends and close are submitted on that loop's ring.</summary>
/// <remarks>
/// <para>
/// Receives: one multishot <c>IORING_OP_RECV</c>, armed at the first <see cref="LoopConnection.ReceiveAsync"/>, fills buffers of
/// the loop's provided-buffer ring; each completion's bytes are copied to the pending receive (or held in pool blocks of the
/// connection's own, at most <see cref="MaxHeldBytes"/>, while nobody receives) and the ring buffer is given back at once.
/// With <see cref="IoScheduling.IoThreads"/>, the completion runs the connection's code inline: it parses, handles, writes and
/// asks for the next receive before the loop reaps the next completion.
/// </para>
/// <para>
/// Sends: a send of at most one block is copied into the loop's staging area (<see cref="IoUringSendStaging"/>), submitted
/// with the turn's batch and completes at once; a larger one is sent from the caller's memory, first at once with a
/// non-blocking <c>sendmsg</c> (its blocks then go back to the pool while hot), and what the socket did not take through the
/// ring (<c>IORING_OP_SEND</c>, or <c>IORING_OP_SENDMSG</c> over several blocks); it completes when the kernel took every byte. One send is in the kernel
/// at a time, so bytes go out in order and a connection has at most one staged send and the caller's own in flight.
/// </para>
/// <para>
/// Calls from other threads are recorded as flags and the connection is queued once on its loop, which performs them in a
/// fixed order (<see cref="LoopConnection"/>). Closing cancels what is in flight (<c>IORING_OP_ASYNC_CANCEL</c>), waits for every completion, then closes
/// the descriptor through the ring (<c>IORING_OP_CLOSE</c>).
/// </para>
/// </remarks>
internal sealed unsafe partial class IoUringConnection : LoopConnection, IIoUringOperations
{
    // Operations, in the low byte of the user data.
    private const byte OpReceive = 1;
    private const byte OpSend = 2;
    private const byte OpCancel = 3;
    private const byte OpClose = 4;
    private const byte OpLingerTimer = 5;

    private readonly IoUringLoop _loop;
    private readonly int _fd;
    private readonly bool _isUnix;

    // Loop-thread state.
    private int _operationsInFlight;
    private bool _sendInFlight;
    private bool _closing;
    private bool _reset;
    private bool _descriptorClosed;
    private bool _shutdownPending;
    private bool _sendShutDown;
    private bool _lingerTimerArmed;
    private bool _lingerTimerCancelled;
    private bool _receiveCancelled;
    private Exception? _sendError;
    private NativeState* _native;

    /// <summary>Wraps accepted descriptor <paramref name="fd"/> on its loop; <paramref name="unixEndPoint"/> is the listener's Unix domain socket endpoint when it is one (null for TCP).</summary>
    public IoUringConnection(IoUringLoop loop, int fd, IoScheduling scheduling, EndPoint? unixEndPoint = null)
        : base(scheduling)
    {
        _loop = loop;
        _fd = fd;
        _isUnix = unixEndPoint is not null;
        if (_isUnix)
        {
            // A Unix domain socket: a peer without an address.
            LocalEndPoint = unixEndPoint;
        }
        else
        {
            byte* address = stackalloc byte[128];
            uint length = 128;
            if (GetSockName(fd, address, &length) == 0)
            {
                LocalEndPoint = SocketAddressBytes.Read(new ReadOnlySpan<byte>(address, (int)length));
            }

            length = 128;
            if (GetPeerName(fd, address, &length) == 0)
            {
                RemoteEndPoint = SocketAddressBytes.Read(new ReadOnlySpan<byte>(address, (int)length));
            }
        }

        _native = (NativeState*)NativeMemory.AllocZeroed((nuint)sizeof(NativeState));
        loop.Register(this);
        Interlocked.Increment(ref loop.OpenConnections);
        Interlocked.Increment(ref loop.AcceptedConnections);
    }

    public override EndPoint? LocalEndPoint { get; }

    public override EndPoint? RemoteEndPoint { get; }

    public override SlabMemoryPool Pool => _loop.Pool;

    public int Slot { get; set; } = -1;

    /// <summary>The loop that owns the connection.</summary>
    internal IoUringLoop Loop => _loop;

    /// <summary>Reads TCP_NODELAY back from the socket (diagnostics and tests); false once the descriptor is closed.</summary>
    internal bool IsNoDelay
    {
        get
        {
            if (Volatile.Read(ref _descriptorClosed))
            {
                return false;
            }

            int value = 0;
            uint length = sizeof(int);
            return GetSocketOption(_fd, IpProtoTcp, TcpNoDelay, &value, &length) == 0 && value != 0;
        }
    }

    private protected override bool IsLoopThread => _loop.IsLoopThread;

    private protected override Exception? SendFailure => Volatile.Read(ref _sendError);

    private protected override void Post(IThreadPoolWorkItem item) => _loop.Post(item);

    /// <summary>The multishot receive holds what arrives while nobody receives, so a wait needs no memory of the caller's.</summary>
    internal override bool CanWaitForData => true;

    private protected override bool TryReceiveAtOnce(Memory<byte> buffer, out int received)
    {
        if (buffer.IsEmpty)
        {
            // A wait for data (WaitForDataAsync): done when bytes are at hand; otherwise it waits as a receive would.
            received = 0;
            return HeldBytes > 0 || _parkedOffset < _parkedLength && _parkedId >= 0;
        }

        if (_parkedId >= 0 && _parkedOffset < _parkedLength)
        {
            // Inside the completion of a wait for data: straight from the ring buffer it was completed with.
            received = TakeParked(buffer);
            return true;
        }

        // A multishot receive brought the bytes already: no system call, no wait.
        received = TakeHeld(buffer);
        if (received == 0)
        {
            return false;
        }

        ArmMultishot();
        return true;
    }

    private protected override bool TrySendAtOnce(ref ReadOnlySequence<byte> buffers, out Exception? error)
    {
        error = null;
        if (_sendInFlight || buffers.Length > IoUringSendStaging.Limit)
        {
            return false;
        }

        // The common case: copied, submitted with the turn's batch, done.
        StageOnLoop(buffers);
        return true;
    }

    public void OnCompletion(byte operation, int result, uint flags)
    {
        switch (operation)
        {
            case OpReceive:
                OnReceiveCompleted(result, flags);
                break;
            case OpSend:
                OnSendCompleted(result);
                break;
            case OpLingerTimer:
                OnLingerTimer(result);
                break;
            case OpClose:
                OnDescriptorClosed(result);
                return;
            default:
                _operationsInFlight--;
                break;
        }

        if (_closing)
        {
            TryFinishClose();
        }
    }

    public void CloseForStop() => CloseOnLoop(reset: true);
}
