using System;
using System.Runtime.InteropServices;
using System.Threading;
using static Falconet.Transport.IoUring.IoUringNative;

namespace Falconet.Transport.IoUring;

// Closing, on the loop thread: the FIN after the bytes already sent, cancellation of what is in flight, the close through
// the ring once every completion is in, and the native memory freed.
internal sealed unsafe partial class IoUringConnection
{
    private ulong _lingerAcked;
    private bool _callerReleased;

    /// <summary>Native memory the kernel reads while an operation is in flight: the gathered send's header and the linger timer.</summary>
    [StructLayout(LayoutKind.Sequential)]
    private struct NativeState
    {
        public MessageHeader Message;
        public KernelTimespec LingerInterval;
    }

    /// <summary>True while the only operation left of a closing connection is a staged send (and its progress timer).</summary>
    private bool IsLingeringSend => _closing && !_reset && _staged is not null && _sendInFlight;

    private protected override void ShutdownSendOnLoop()
    {
        if (_closing || _sendShutDown)
        {
            return;
        }

        if (_sendInFlight || _sendPending)
        {
            // After the bytes already queued: the send's completion comes back here.
            _shutdownPending = true;
            return;
        }

        _shutdownPending = false;
        _sendShutDown = true;

        // shutdown(2) at once: the ring's IORING_OP_SHUTDOWN always runs on a kernel worker thread, a hop for one short call.
        Shutdown(_fd, ShutWrite);
    }

    /// <summary>
    /// Closes on the loop thread: a pending receive returns 0, a pending send fails; with <paramref name="reset"/> the peer
    /// gets an RST. A graceful close lets a staged send (complete for its caller already) go on while the peer keeps taking
    /// bytes; the caller's <see cref="LoopConnection.DisposeAsync"/> does not wait for it. A reset requested meanwhile cancels it.
    /// </summary>
    internal override void CloseOnLoop(bool reset)
    {
        if (_descriptorClosed)
        {
            return;
        }

        if (reset && !_reset)
        {
            _reset = true;
            SetResetOnClose(_fd);
            if (_closing)
            {
                if (_sendInFlight)
                {
                    SubmitCancel(OpSend);
                }

                TryFinishClose();
                return;
            }
        }

        if (_closing)
        {
            return;
        }

        _closing = true;
        MarkClosedLocally(reset);

        ReleaseHeld();
        if (_multishotArmed)
        {
            CancelReceive();
        }

        if (_receivePending)
        {
            CompleteReceive(0);
        }

        if (_sendPending && (!_sendInFlight || _staged is not null))
        {
            CompleteSend(new ConnectionAbortedException("The connection was aborted or disposed."));
        }

        if (_sendInFlight)
        {
            if (_reset || _staged is null)
            {
                SubmitCancel(OpSend);
            }
            else
            {
                _lingerAcked = BytesAcknowledged();
                ArmLingerTimer();
            }
        }

        TryFinishClose();
    }

    private void OnLingerTimer(int result)
    {
        _operationsInFlight--;
        _lingerTimerArmed = false;
        if (result != -ETIME || !IsLingeringSend)
        {
            return;
        }

        ulong acked = BytesAcknowledged();
        if (acked > _lingerAcked)
        {
            _lingerAcked = acked;
            ArmLingerTimer();
        }
        else
        {
            // The peer took nothing for a whole interval: give up on the staged bytes.
            CloseOnLoop(reset: true);
        }
    }

    private void ArmLingerTimer()
    {
        long interval = _loop.LingeringSendCheckInterval.Ticks;
        _native->LingerInterval = new KernelTimespec { Seconds = interval / TimeSpan.TicksPerSecond, Nanoseconds = interval % TimeSpan.TicksPerSecond * 100 };
        Sqe* sqe = _loop.Submit(this, OpLingerTimer);
        sqe->Opcode = OpcodeTimeout;
        sqe->Fd = -1;
        sqe->Address = (ulong)&_native->LingerInterval;
        sqe->Length = 1;
        _lingerTimerArmed = true;
        _lingerTimerCancelled = false;
        _operationsInFlight++;
    }

    /// <summary>The bytes the peer has acknowledged on this connection (TCP_INFO's tcpi_bytes_acked); 0 when unknown.</summary>
    /// <remarks>A Unix domain socket reports no such count: its lingering send gets one interval to complete.</remarks>
    private ulong BytesAcknowledged()
    {
        if (_isUnix)
        {
            return 0;
        }

        // struct tcp_info: tcpi_bytes_acked is the u64 at offset 120 (Linux 4.1 and later).
        byte* info = stackalloc byte[232];
        uint length = 232;
        return GetSocketOption(_fd, IpProtoTcp, TcpInfo, info, &length) == 0 && length >= 128 ? *(ulong*)(info + 120) : 0;
    }

    /// <summary>
    /// Once nothing of the caller's is in flight, the caller's close is done (a lingering staged send goes on by itself);
    /// once nothing at all is, FIN for a graceful close, then the close itself through the ring.
    /// </summary>
    private void TryFinishClose()
    {
        if (!_closing || _descriptorClosed)
        {
            return;
        }

        if (_lingerTimerArmed && !_lingerTimerCancelled && !IsLingeringSend)
        {
            _lingerTimerCancelled = true;
            SubmitCancel(OpLingerTimer);
        }

        int lingering = (IsLingeringSend ? 1 : 0) + (_lingerTimerArmed ? 1 : 0);
        if (_operationsInFlight != lingering)
        {
            return;
        }

        if (lingering != 0)
        {
            // The caller's receive and send are over: its DisposeAsync may complete and its memory go back.
            ReleaseCaller();
            return;
        }

        if (!_reset && !_sendShutDown)
        {
            _sendShutDown = true;
            Shutdown(_fd, ShutWrite);
        }

        Volatile.Write(ref _descriptorClosed, true);
        Sqe* sqe = _loop.Submit(this, OpClose);
        sqe->Opcode = OpcodeClose;
        sqe->Fd = _fd;
        _operationsInFlight++;
    }

    private void SubmitCancel(byte operation)
    {
        _loop.SubmitCancel(this, operation, OpCancel);
        _operationsInFlight++;
    }

    private void ReleaseCaller()
    {
        if (!_callerReleased)
        {
            _callerReleased = true;
            ReleaseHandle();
        }
    }

    private void OnDescriptorClosed(int result)
    {
        _operationsInFlight--;
        if (result < 0 && result != -EBADF)
        {
            // The ring could not close it: close it here rather than leak it.
            Close(_fd);
        }

        ReleaseHeld();
        ReleaseSendPins();
        NativeMemory.Free(_native);
        _native = null;
        NativeMemory.Free(_vectors);
        _vectors = null;
        _vectorCapacity = 0;
        _loop.Unregister(this);
        Interlocked.Decrement(ref _loop.OpenConnections);
        ReleaseCaller();
    }
}
