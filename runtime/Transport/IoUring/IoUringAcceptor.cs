using System;
using System.Net.Sockets;
using System.Runtime.InteropServices;
using System.Threading;
using System.Threading.Tasks;
using static Falconet.Transport.IoUring.IoUringNative;

namespace Falconet.Transport.IoUring;

/// <summary>
/// One listening socket served by one loop with a multishot accept: every connection that arrives completes on the loop's
/// ring, where it becomes a connection of that loop.
/// </summary>
/// <remarks>
/// The acceptor only needs the listening descriptor: a TCP socket made, bound and put into listening by <see cref="Socket"/>,
/// or a descriptor of its own (a duplicate of a Unix domain socket's or an adopted socket's), which it closes. A connection
/// past the transport's limit, or one taken while out of descriptors, is reset at once.
/// </remarks>
internal sealed unsafe class IoUringAcceptor : IIoUringOperations
{
    private const byte OpAccept = 1;
    private const byte OpCancel = 2;
    private const byte OpTimer = 3;

    /// <summary>The pause before accepting again after a failure that repeats (out of descriptors with no reserve, or another error).</summary>
    private static readonly TimeSpan RetryDelay = TimeSpan.FromMilliseconds(100);

    private readonly IoUringConnectionListener _listener;
    private readonly IoUringLoop _loop;
    private readonly Socket? _socket;
    private readonly int _fd;
    private readonly UnixDomainSocketEndPoint? _unixEndPoint;
    private readonly TaskCompletionSource _closed = new(TaskCreationOptions.RunContinuationsAsynchronously);
    private KernelTimespec* _retryDelay;
    private int _operationsInFlight;
    private int _reserve = -1;
    private bool _acceptArmed;
    private bool _timerArmed;
    private bool _closing;
    private bool _shedding;
    private bool _failing;

    /// <summary>Accepts from a listening TCP socket; the acceptor disposes it.</summary>
    public IoUringAcceptor(IoUringConnectionListener listener, IoUringLoop loop, Socket socket)
    {
        _listener = listener;
        _loop = loop;
        _socket = socket;
        _fd = (int)socket.Handle;
    }

    /// <summary>Accepts from listening descriptor <paramref name="fd"/>, which the acceptor closes; <paramref name="unixEndPoint"/> is set when it is a Unix domain socket.</summary>
    public IoUringAcceptor(IoUringConnectionListener listener, IoUringLoop loop, int fd, UnixDomainSocketEndPoint? unixEndPoint)
    {
        _listener = listener;
        _loop = loop;
        _fd = fd;
        _unixEndPoint = unixEndPoint;
    }

    public int Slot { get; set; } = -1;

    /// <summary>Registers with the loop and arms the multishot accept, on the loop thread.</summary>
    public Task StartAsync()
    {
        var started = new TaskCompletionSource(TaskCreationOptions.RunContinuationsAsynchronously);
        _loop.Post(new LoopAction(() =>
        {
            if (_loop.IsStopping || !_loop.IsLoopThread)
            {
                started.SetException(new ObjectDisposedException(nameof(IoUringTransportFactory)));
                return;
            }

            _retryDelay = (KernelTimespec*)NativeMemory.AllocZeroed((nuint)sizeof(KernelTimespec));
            _loop.Register(this);
            TakeReserve();
            ArmAccept();
            started.SetResult();
        }));
        return started.Task;
    }

    /// <summary>Stops accepting and closes the socket, on the loop thread; completes once no accept is in flight.</summary>
    public Task CloseAsync()
    {
        _loop.Post(new LoopAction(CloseOnLoop));
        return _closed.Task;
    }

    /// <summary>Closes a socket whose acceptor never started.</summary>
    public void CloseUnstarted() => CloseListening();

    public void OnCompletion(byte operation, int result, uint flags)
    {
        switch (operation)
        {
            case OpAccept:
                OnAcceptCompleted(result, flags);
                break;
            case OpTimer:
                _timerArmed = false;
                _operationsInFlight--;
                if (!_closing)
                {
                    ArmAccept();
                }

                break;
            default:
                _operationsInFlight--;
                break;
        }

        if (_closing)
        {
            TryFinishClose();
        }
    }

    public void CloseForStop() => CloseOnLoop();

    private void OnAcceptCompleted(int result, uint flags)
    {
        if ((flags & CqeMore) == 0)
        {
            _acceptArmed = false;
            _operationsInFlight--;
        }

        bool retryLater = false;
        if (result >= 0)
        {
            _failing = false;
            OnAccepted(result);
        }
        else if (result is -EMFILE or -ENFILE)
        {
            if (_reserve >= 0)
            {
                // Out of descriptors: the spare one freed here takes the waiting connection, which is reset (shed) to take the
                // spare back. Without it the connection would stay in the backlog and the accept fail again at once, forever.
                Close(_reserve);
                _reserve = -1;
                _shedding = true;
            }
            else
            {
                retryLater = true;
            }
        }
        else if (result != -ECANCELED)
        {
            // Logged once until an accept succeeds.
            if (!_failing)
            {
                _failing = true;
                IoUringLog.AcceptFailed(_loop.Logger, _loop.Index, ErrorName(-result), ErrorText(-result));
            }

            retryLater = true;
        }

        if (!_acceptArmed && !_closing && !_timerArmed)
        {
            if (retryLater)
            {
                ArmRetryTimer();
            }
            else
            {
                ArmAccept();
            }
        }
    }

    private void OnAccepted(int fd)
    {
        if (_closing || _shedding || _loop.IsStopping || _listener.IsFull)
        {
            // Counted before the peer can see the reset; reset before anything is made for it (the descriptor is free at once).
            if (!_closing && !_loop.IsStopping)
            {
                _listener.CountRefused();
            }

            CloseWithReset(fd);

            _shedding = false;
            if (_reserve < 0 && !_closing)
            {
                TakeReserve();
            }

            return;
        }

        if (_reserve < 0)
        {
            TakeReserve();
        }

        _listener.OnAccepted(new IoUringConnection(_loop, fd, _listener.Scheduling, _unixEndPoint));
    }

    private void ArmAccept()
    {
        Sqe* sqe = _loop.Submit(this, OpAccept);
        sqe->Opcode = OpcodeAccept;
        sqe->Fd = _fd;
        sqe->IoPriority = AcceptMultishot;
        sqe->OperationFlags = SockCloexec;
        _acceptArmed = true;
        _operationsInFlight++;
    }

    private void ArmRetryTimer()
    {
        *_retryDelay = new KernelTimespec { Nanoseconds = (long)RetryDelay.TotalMilliseconds * 1_000_000 };
        Sqe* sqe = _loop.Submit(this, OpTimer);
        sqe->Opcode = OpcodeTimeout;
        sqe->Fd = -1;
        sqe->Address = (ulong)_retryDelay;
        sqe->Length = 1;
        _timerArmed = true;
        _operationsInFlight++;
    }

    /// <summary>Keeps a spare descriptor (a duplicate of the listening socket's) to free when accepting runs out of them.</summary>
    private void TakeReserve() => _reserve = Duplicate(_fd);

    private void CloseOnLoop()
    {
        if (_closing || Slot < 0)
        {
            _closed.TrySetResult();
            return;
        }

        _closing = true;
        if (_acceptArmed)
        {
            _loop.SubmitCancel(this, OpAccept, OpCancel);
            _operationsInFlight++;
        }

        if (_timerArmed)
        {
            _loop.SubmitCancel(this, OpTimer, OpCancel);
            _operationsInFlight++;
        }

        TryFinishClose();
    }

    private void TryFinishClose()
    {
        if (_operationsInFlight != 0 || Slot < 0)
        {
            return;
        }

        if (_reserve >= 0)
        {
            Close(_reserve);
            _reserve = -1;
        }

        CloseListening();
        NativeMemory.Free(_retryDelay);
        _retryDelay = null;
        _loop.Unregister(this);
        _closed.TrySetResult();
    }

    private void CloseListening()
    {
        if (_socket is not null)
        {
            _socket.Dispose();
        }
        else
        {
            Close(_fd);
        }
    }
}
