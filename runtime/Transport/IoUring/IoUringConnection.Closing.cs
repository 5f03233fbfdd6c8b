using System;
using System.Runtime.InteropServices;
using System.Threading;
using static Falconet.Transport.IoUring.IoUringNative;

namespace Falconet.Transport.IoUring;

// Closing, on the loop thread: the FIN after the bytes already sent, cancellation of what is in flight, the close through
// the ring once every completion is in, and the native memory freed.
internal sealed unsafe partial class IoUringConnection
{
    /// <summary>How long a graceful close waits for a staged send the peer does not take before it resets instead.</summary>
    internal static readonly TimeSpan StagedSendCloseTimeout = TimeSpan.FromSeconds(5);

    /// <summary>Native memory the kernel reads while an operation is in flight: the gathered send's header and the close timer.</summary>
    [StructLayout(LayoutKind.Sequential)]
    private struct NativeState
    {
        public MessageHeader Message;
        public KernelTimespec CloseTimeout;
    }

    private void ShutdownSendOnLoop()
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
    /// gets an RST. A graceful close lets a staged send (already complete for its caller) finish first, for at most
    /// <see cref="StagedSendCloseTimeout"/>; a reset requested meanwhile cancels it.
    /// </summary>
    internal void CloseOnLoop(bool reset)
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
        if (Volatile.Read(ref _state) == Open)
        {
            Volatile.Write(ref _state, reset ? Aborted : Disposed);
        }

        ReleaseHeld();
        if (_receiveInFlight || _multishotArmed)
        {
            CancelReceive();
        }

        if (_receivePending && !_receiveInFlight)
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
                ArmCloseTimer();
            }
        }

        TryFinishClose();
    }

    private void ArmCloseTimer()
    {
        _native->CloseTimeout = new KernelTimespec { Seconds = (long)StagedSendCloseTimeout.TotalSeconds };
        Sqe* sqe = _loop.Submit(this, OpCloseTimer);
        sqe->Opcode = OpcodeTimeout;
        sqe->Fd = -1;
        sqe->Address = (ulong)&_native->CloseTimeout;
        sqe->Length = 1;
        _closeTimerArmed = true;
        _operationsInFlight++;
    }

    /// <summary>Once nothing is in flight: FIN for a graceful close, then the close itself through the ring.</summary>
    private void TryFinishClose()
    {
        if (!_closing || _descriptorClosed)
        {
            return;
        }

        if (_closeTimerArmed && !_sendInFlight && !_closeTimerCancelled)
        {
            _closeTimerCancelled = true;
            SubmitCancel(OpCloseTimer);
        }

        if (_operationsInFlight != 0)
        {
            return;
        }

        if (!_reset && !_sendShutDown)
        {
            _sendShutDown = true;
            Shutdown(_fd, ShutWrite);
        }

        _descriptorClosed = true;
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

    private void OnDescriptorClosed(int result)
    {
        _operationsInFlight--;
        if (result < 0 && result != -EBADF)
        {
            // The ring could not close it: close it here rather than leak it.
            Close(_fd);
        }

        _receivePin.Release();
        ReleaseHeld();
        ReleaseSendPins();
        NativeMemory.Free(_native);
        _native = null;
        NativeMemory.Free(_vectors);
        _vectors = null;
        _vectorCapacity = 0;
        _loop.Unregister(this);
        Interlocked.Decrement(ref _loop.OpenConnections);
        ReleaseBusy();
    }
}
