using System;
using System.Buffers;
using System.Threading;
using Falconet.Buffers;
using static Falconet.Transport.IoUring.IoUringNative;

namespace Falconet.Transport.IoUring;

// Receives, on the loop thread: one multishot IORING_OP_RECV, armed at the first receive, stays armed across requests; the
// kernel fills a buffer of the loop's buffer ring whenever bytes arrive, and the connection copies them out at once: into
// the pending receive's memory, or, when nobody is receiving, into blocks of its own (held), so the ring's buffers never
// wait for a slow reader.
internal sealed unsafe partial class IoUringConnection : IIoUringBufferWaiter
{
    /// <summary>Bytes a connection holds for a reader that is not reading before its receive is paused (the socket's own buffer, and TCP's flow control, take over).</summary>
    internal const int MaxHeldBytes = 64 * 1024;

    private BlockChain? _held;
    private bool _peerClosed;
    private bool _multishotArmed;
    private bool _waitingForBuffers;
    private Exception? _receiveError;

    // A ring buffer whose bytes a wait for data was completed with, while that completion runs: the receive that follows it
    // inline copies from here, and whatever it leaves is held once the completion returns.
    private int _parkedId = -1;
    private int _parkedOffset;
    private int _parkedLength;

    private long HeldBytes => _held?.Length ?? 0;

    /// <summary>Copies what the parked ring buffer still has into <paramref name="buffer"/>; the count copied.</summary>
    private int TakeParked(Memory<byte> buffer)
    {
        int count = Math.Min(_parkedLength - _parkedOffset, buffer.Length);
        _loop.ReceiveBuffers.Data(_parkedId, _parkedLength).Slice(_parkedOffset, count).CopyTo(buffer.Span);
        _parkedOffset += count;
        return count;
    }

    /// <summary>Copies what is held into <paramref name="buffer"/>; the count copied (0 when nothing is held).</summary>
    private int TakeHeld(Memory<byte> buffer)
    {
        if (HeldBytes == 0)
        {
            return 0;
        }

        ReadOnlySequence<byte> held = _held!.GetSequence();
        int count = (int)Math.Min(held.Length, buffer.Length);
        ReadOnlySequence<byte> taken = held.Slice(0, count);
        taken.CopyTo(buffer.Span);
        _held.Consume(taken.End);
        if (_held.Length == 0)
        {
            // Nothing waits: the chain's last block goes back to the pool, and the peer's end, if it came, is the next receive's.
            _held.Dispose();
            _endOfStream = _peerClosed;
        }

        return count;
    }

    /// <summary>A receive is pending: completes it from what is held, or arms the multishot receive.</summary>
    private protected override void StartReceiveOnLoop()
    {
        if (!_receivePending)
        {
            return;
        }

        if (HeldBytes > 0)
        {
            int copied = TakeHeld(_receiveBuffer);
            ArmMultishot();
            CompleteReceive(copied);
            return;
        }

        if (_receiveError is { } error)
        {
            _receiveError = null;
            CompleteReceive(0, error);
            return;
        }

        if (_closing || IsReceiveStopped || _peerClosed)
        {
            CompleteReceive(0);
            return;
        }

        ArmMultishot();
    }

    private void ArmMultishot()
    {
        if (_multishotArmed || _waitingForBuffers || _closing || _peerClosed || _receiveError is not null
            || HeldBytes >= MaxHeldBytes || IsReceiveStopped)
        {
            return;
        }

        Sqe* sqe = _loop.Submit(this, OpReceive);
        sqe->Opcode = OpcodeRecv;
        sqe->Fd = _fd;
        sqe->IoPriority = RecvMultishot;
        sqe->Flags = SqeBufferSelect;
        sqe->BufferGroup = IoUringReceiveBuffers.GroupId;
        _multishotArmed = true;
        _operationsInFlight++;
    }

    private void OnReceiveCompleted(int result, uint flags)
    {
        if ((flags & CqeMore) == 0)
        {
            _multishotArmed = false;
            _receiveCancelled = false;
            _operationsInFlight--;
        }

        if (result > 0)
        {
            OnBytesArrived((int)(flags >> CqeBufferShift), result);
            return;
        }

        if (result == 0)
        {
            // Receives return 0 from now on, once every byte that came before the end was taken.
            _peerClosed = true;
            _endOfStream = HeldBytes == 0;
        }
        else if (result == -ENOBUFS)
        {
            // Every buffer of the ring was filled within this turn: they are back by its end, then the receive is armed again.
            _waitingForBuffers = true;
            _loop.ReceiveBuffers.OnExhausted(this);
        }
        else if (result != -ECANCELED && !_closing)
        {
            _receiveError = result == -ECONNRESET
                ? new ConnectionResetException("The peer reset the connection.", new IoUringException("recv", ECONNRESET))
                : new IoUringException("recv", -result);
        }

        if (_receivePending)
        {
            StartReceiveOnLoop();
        }
    }

    /// <summary>Hands the bytes of ring buffer <paramref name="id"/> to the pending receive, holds what it cannot take, and gives the buffer back.</summary>
    private void OnBytesArrived(int id, int length)
    {
        IoUringReceiveBuffers buffers = _loop.ReceiveBuffers;
        ReadOnlySpan<byte> data = buffers.Data(id, length);
        if (_closing || IsReceiveStopped)
        {
            buffers.Provide(id);
            return;
        }

        if (_receivePending && _receiveBuffer.IsEmpty && HeldBytes == 0)
        {
            // A wait for data: its continuation normally receives at once, inline, straight from the ring buffer.
            _parkedId = id;
            _parkedOffset = 0;
            _parkedLength = length;
            CompleteReceive(0);
            int left = _parkedLength - _parkedOffset;
            _parkedId = -1;
            if (left > 0 && !_closing && !IsReceiveStopped)
            {
                (_held ??= new BlockChain(Pool)).Write(data.Slice(length - left));
                if (_receivePending)
                {
                    StartReceiveOnLoop();
                }
            }

            buffers.Provide(id);
            return;
        }

        int taken = 0;
        if (_receivePending && HeldBytes == 0)
        {
            // The common case: straight into the reader's memory.
            taken = Math.Min(length, _receiveBuffer.Length);
            data.Slice(0, taken).CopyTo(_receiveBuffer.Span);
        }

        if (taken < length)
        {
            (_held ??= new BlockChain(Pool)).Write(data.Slice(taken));
            if (HeldBytes >= MaxHeldBytes && _multishotArmed)
            {
                // The reader is not keeping up: pause until it has taken what is here.
                CancelReceive();
            }
        }

        buffers.Provide(id);
        if (_receivePending)
        {
            if (taken > 0)
            {
                CompleteReceive(taken);
            }
            else
            {
                StartReceiveOnLoop();
            }
        }
    }

    private protected override void StopReceivingOnLoop()
    {
        ReleaseHeld();
        if (_multishotArmed)
        {
            CancelReceive();
        }

        if (_receivePending)
        {
            CompleteReceive(0);
        }
    }

    private void CancelReceive()
    {
        if (!_receiveCancelled)
        {
            _receiveCancelled = true;
            SubmitCancel(OpReceive);
        }
    }

    void IIoUringBufferWaiter.OnBuffersAvailable()
    {
        _waitingForBuffers = false;
        if (_receivePending)
        {
            StartReceiveOnLoop();
        }
        else
        {
            // Armed again without a receive pending: bytes arriving meanwhile are held as they would have been.
            ArmMultishot();
        }
    }

    /// <summary>Returns the held blocks to the pool (the connection stopped receiving or closes).</summary>
    private void ReleaseHeld()
    {
        _held?.Dispose();
        if (_waitingForBuffers)
        {
            _waitingForBuffers = false;
            _loop.ReceiveBuffers.RemoveWaiter(this);
        }
    }
}
