using BenchmarkDotNet.Attributes;
using Falconet.Buffers;
using Falconet.Http;
using Falconet.Http.Http1;
using Microsoft.Extensions.Primitives;

namespace Falconet.Benchmarks;

/// <summary>
/// Writing the headers of a response into output blocks (<see cref="ResponseHeaderCollection.CopyTo{TWriter}"/>), as a
/// minimal-API string result has them on Falconet: Content-Type, Server, Date, Transfer-Encoding and one header outside
/// the schema that a middleware added.
/// </summary>
[MemoryDiagnoser]
public class ResponseHeadWriteBenchmarks
{
    private readonly SlabMemoryPool _pool = new("benchmark");
    private readonly ResponseHeaders _headers = new();
    private BlockChain _chain = null!;
    private BlockChainWriter _writer = null!;
    private readonly Http1ResponseHead _head = new();

    [GlobalSetup]
    public void Setup()
    {
        _chain = new BlockChain(_pool);
        _writer = new BlockChainWriter(_chain);
        _headers.ContentType = new StringValues("text/plain; charset=utf-8");
        _headers.Server = new StringValues("Falconet");
        _headers.Date = DateHeaderValues.Value;
        _headers.TransferEncoding = new StringValues("chunked");
        _headers["X-Elapsed-Microseconds"] = "12";
    }

    [Benchmark]
    public long CopyTo()
    {
        BlockChainWriter writer = _writer;
        _headers.CopyTo(ref writer);
        long length = _chain.Length;
        _chain.Consume(_chain.GetSequence().End);
        return length;
    }

    /// <summary>
    /// The whole HTTP/1.1 head (status line, these headers, empty line) as a connection writes it: from the bytes of the
    /// previous head when the same value instances are set again, as they are here.
    /// </summary>
    [Benchmark]
    public long Http1Head()
    {
        _head.Write(_writer, 200, _headers);
        long length = _chain.Length;
        _chain.Consume(_chain.GetSequence().End);
        return length;
    }
}
