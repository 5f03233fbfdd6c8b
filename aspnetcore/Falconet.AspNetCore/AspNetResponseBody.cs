using System;
using System.IO;
using System.IO.Pipelines;
using System.Threading;
using System.Threading.Tasks;
using FalconetResponse = Falconet.Http.HttpResponse;

namespace Falconet.AspNetCore;

/// <summary>
/// The response body as ASP.NET Core's <see cref="Stream"/>: the first write starts the response (OnStarting), then
/// bytes go to Falconet's response. One per connection; disposing it does nothing.
/// </summary>
internal sealed class AspNetResponseBodyStream : Stream
{
    private readonly IConnectionFeatures _starter;

    public AspNetResponseBodyStream(IConnectionFeatures starter)
    {
        _starter = starter;
    }

    private FalconetResponse Response => _starter.Context.Response;

    public override bool CanRead => false;

    public override bool CanSeek => false;

    public override bool CanWrite => true;

    public override long Length => throw new NotSupportedException();

    public override long Position
    {
        get => throw new NotSupportedException();
        set => throw new NotSupportedException();
    }

    public override ValueTask WriteAsync(ReadOnlyMemory<byte> buffer, CancellationToken cancellationToken = default)
    {
        ValueTask start = _starter.StartAsync();
        return start.IsCompletedSuccessfully ? Response.WriteAsync(buffer, cancellationToken) : StartThenWriteAsync(start, buffer, cancellationToken);
    }

    public override Task WriteAsync(byte[] buffer, int offset, int count, CancellationToken cancellationToken)
    {
        ValidateBufferArguments(buffer, offset, count);
        ValueTask write = WriteAsync(buffer.AsMemory(offset, count), cancellationToken);
        return write.IsCompletedSuccessfully ? Task.CompletedTask : write.AsTask();
    }

    public override void Write(byte[] buffer, int offset, int count)
    {
        ValidateBufferArguments(buffer, offset, count);
        Write(buffer.AsSpan(offset, count));
    }

    public override void Write(ReadOnlySpan<byte> buffer)
    {
        ThrowIfSynchronousIODisallowed();
        _starter.StartSynchronously();
        Response.Write(buffer);
    }

    public override void WriteByte(byte value) => Write([value]);

    public override IAsyncResult BeginWrite(byte[] buffer, int offset, int count, AsyncCallback? callback, object? state)
        => TaskToAsyncResult.Begin(WriteAsync(buffer, offset, count, CancellationToken.None), callback, state);

    public override void EndWrite(IAsyncResult asyncResult) => TaskToAsyncResult.End(asyncResult);

    public override Task FlushAsync(CancellationToken cancellationToken) => FlushCoreAsync(cancellationToken).AsTask();

    public override void Flush()
    {
        // As Falconet's own stream: a synchronous flush leaves the bytes buffered, so it cannot block the I/O thread.
        ThrowIfSynchronousIODisallowed();
        _starter.StartSynchronously();
    }

    public override int Read(byte[] buffer, int offset, int count) => throw new NotSupportedException();

    public override long Seek(long offset, SeekOrigin origin) => throw new NotSupportedException();

    public override void SetLength(long value) => throw new NotSupportedException();

    protected override void Dispose(bool disposing)
    {
        // The stream belongs to the connection.
    }

    public override ValueTask DisposeAsync() => default;

    internal async ValueTask FlushCoreAsync(CancellationToken cancellationToken)
    {
        await _starter.StartAsync().ConfigureAwait(false);
        await Response.FlushAsync(cancellationToken).ConfigureAwait(false);
    }

    private async ValueTask StartThenWriteAsync(ValueTask start, ReadOnlyMemory<byte> buffer, CancellationToken cancellationToken)
    {
        await start.ConfigureAwait(false);
        await Response.WriteAsync(buffer, cancellationToken).ConfigureAwait(false);
    }

    private void ThrowIfSynchronousIODisallowed()
    {
        if (!Response.AllowSynchronousWrites)
        {
            throw new InvalidOperationException("Synchronous operations are disallowed. Call WriteAsync or set AllowSynchronousIO to true instead.");
        }
    }
}

/// <summary>
/// The response body as a <see cref="PipeWriter"/> straight over Falconet's output blocks: GetMemory hands out the free
/// space of the staged body block, Advance commits it, FlushAsync starts the response and sends.
/// </summary>
internal sealed class AspNetResponseBodyPipeWriter : PipeWriter
{
    private readonly IConnectionFeatures _starter;
    private long _unflushed;
    private bool _completed;

    public AspNetResponseBodyPipeWriter(IConnectionFeatures starter)
    {
        _starter = starter;
    }

    private FalconetResponse Response => _starter.Context.Response;

    // Serializers (System.Text.Json) flush when this passes their threshold.
    public override bool CanGetUnflushedBytes => true;

    public override long UnflushedBytes => _unflushed;

    public void Reset()
    {
        _completed = false;
        _unflushed = 0;
    }

    public override void Advance(int bytes)
    {
        if (bytes > 0)
        {
            _starter.StartSynchronously();
        }

        Response.BodyWriter.Advance(bytes);
        _unflushed += bytes;
    }

    public override Memory<byte> GetMemory(int sizeHint = 0)
    {
        ThrowIfCompleted();
        return Response.BodyWriter.GetMemory(sizeHint);
    }

    public override Span<byte> GetSpan(int sizeHint = 0)
    {
        ThrowIfCompleted();
        return Response.BodyWriter.GetSpan(sizeHint);
    }

    public override ValueTask<FlushResult> FlushAsync(CancellationToken cancellationToken = default)
    {
        _unflushed = 0;
        ValueTask start = _starter.StartAsync();
        if (start.IsCompletedSuccessfully)
        {
            ValueTask flush = Response.FlushAsync(cancellationToken);
            if (flush.IsCompletedSuccessfully)
            {
                return new ValueTask<FlushResult>(new FlushResult(isCanceled: false, isCompleted: false));
            }

            return AwaitFlushAsync(flush);
        }

        return StartThenFlushAsync(start, cancellationToken);
    }

    public override ValueTask<FlushResult> WriteAsync(ReadOnlyMemory<byte> source, CancellationToken cancellationToken = default)
    {
        ValueTask start = _starter.StartAsync();
        if (start.IsCompletedSuccessfully)
        {
            ValueTask write = Response.WriteAsync(source, cancellationToken);
            if (write.IsCompletedSuccessfully)
            {
                return new ValueTask<FlushResult>(new FlushResult(isCanceled: false, isCompleted: false));
            }

            return AwaitWriteAsync(write);
        }

        return StartThenWriteAsync(start, source, cancellationToken);
    }

    public override void CancelPendingFlush()
    {
        // A flush waits only for the socket to take the bytes; there is nothing to cancel short of the connection.
    }

    public override void Complete(Exception? exception = null)
    {
        _completed = true;
        if (exception is not null)
        {
            _starter.Context.Abort();
        }
    }

    public override async ValueTask CompleteAsync(Exception? exception = null)
    {
        Complete(exception);
        if (exception is null)
        {
            await _starter.CompleteAsync().ConfigureAwait(false);
        }
    }

    public override Stream AsStream(bool leaveOpen = false) => base.AsStream(leaveOpen: true);

    private static async ValueTask<FlushResult> AwaitFlushAsync(ValueTask flush)
    {
        await flush.ConfigureAwait(false);
        return new FlushResult(isCanceled: false, isCompleted: false);
    }

    private async ValueTask<FlushResult> StartThenFlushAsync(ValueTask start, CancellationToken cancellationToken)
    {
        await start.ConfigureAwait(false);
        await Response.FlushAsync(cancellationToken).ConfigureAwait(false);
        return new FlushResult(isCanceled: false, isCompleted: false);
    }

    private static async ValueTask<FlushResult> AwaitWriteAsync(ValueTask write)
    {
        await write.ConfigureAwait(false);
        return new FlushResult(isCanceled: false, isCompleted: false);
    }

    private async ValueTask<FlushResult> StartThenWriteAsync(ValueTask start, ReadOnlyMemory<byte> source, CancellationToken cancellationToken)
    {
        await start.ConfigureAwait(false);
        await Response.WriteAsync(source, cancellationToken).ConfigureAwait(false);
        return new FlushResult(isCanceled: false, isCompleted: false);
    }

    private void ThrowIfCompleted()
    {
        if (_completed)
        {
            throw new InvalidOperationException("Writing is not allowed after the writer was completed.");
        }
    }
}
