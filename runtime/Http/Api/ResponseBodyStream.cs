using System;
using System.IO;
using System.Threading;
using System.Threading.Tasks;

namespace Falconet.Http;

/// <summary>
/// A write-only <see cref="Stream"/> over the <see cref="HttpResponse"/> body; one per connection, so disposing it
/// does nothing. Synchronous writes and Flush throw unless <see cref="HttpResponse.AllowSynchronousWrites"/> is set.
/// </summary>
internal sealed class ResponseBodyStream : Stream
{
    private readonly HttpResponse _response;

    public ResponseBodyStream(HttpResponse response)
    {
        _response = response;
    }

    public override bool CanRead => false;

    public override bool CanSeek => false;

    public override bool CanWrite => true;

    public override long Length => throw new NotSupportedException();

    public override long Position
    {
        get => throw new NotSupportedException();
        set => throw new NotSupportedException();
    }

    public override void Write(byte[] buffer, int offset, int count)
    {
        ValidateBufferArguments(buffer, offset, count);
        ThrowIfSynchronousWritesDisallowed();
        _response.Write(buffer.AsSpan(offset, count));
    }

    public override void Write(ReadOnlySpan<byte> buffer)
    {
        ThrowIfSynchronousWritesDisallowed();
        _response.Write(buffer);
    }

    public override void WriteByte(byte value)
    {
        ThrowIfSynchronousWritesDisallowed();
        _response.Write([value]);
    }

    public override ValueTask WriteAsync(ReadOnlyMemory<byte> buffer, CancellationToken cancellationToken = default)
        => _response.WriteAsync(buffer, cancellationToken);

    public override Task WriteAsync(byte[] buffer, int offset, int count, CancellationToken cancellationToken)
    {
        ValidateBufferArguments(buffer, offset, count);
        return _response.WriteAsync(buffer.AsMemory(offset, count), cancellationToken).AsTask();
    }

    // The base implementation would run the synchronous Write on another thread.
    public override IAsyncResult BeginWrite(byte[] buffer, int offset, int count, AsyncCallback? callback, object? state)
        => TaskToAsyncResult.Begin(WriteAsync(buffer, offset, count, CancellationToken.None), callback, state);

    public override void EndWrite(IAsyncResult asyncResult) => TaskToAsyncResult.End(asyncResult);

    public override Task FlushAsync(CancellationToken cancellationToken) => _response.FlushAsync(cancellationToken).AsTask();

    public override void Flush()
    {
        // Sending would block the handler's thread on the socket. When synchronous writes are allowed, Flush leaves the
        // bytes buffered (sent when the handler completes or at the next asynchronous flush) and so keeps the
        // computed Content-Length of a body that completes buffered.
        ThrowIfSynchronousWritesDisallowed();
    }

    public override int Read(byte[] buffer, int offset, int count) => throw new NotSupportedException();

    public override long Seek(long offset, SeekOrigin origin) => throw new NotSupportedException();

    public override void SetLength(long value) => throw new NotSupportedException();

    private void ThrowIfSynchronousWritesDisallowed()
    {
        if (!_response.AllowSynchronousWrites)
        {
            throw new NotSupportedException(
                "Synchronous writes to the response body are disallowed: they cannot wait for the socket without blocking "
                + "the thread the handler runs on. Use WriteAsync and FlushAsync, or set HttpResponse.AllowSynchronousWrites to buffer them.");
        }
    }

    protected override void Dispose(bool disposing)
    {
        // The stream belongs to the connection and lives as long as it does.
    }

    public override ValueTask DisposeAsync() => default;
}
