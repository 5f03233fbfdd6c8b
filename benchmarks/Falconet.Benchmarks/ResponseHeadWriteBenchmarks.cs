using BenchmarkDotNet.Attributes;
using Falconet.Buffers;
using Falconet.Http;
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
}
