using System.Collections.Generic;
using Falconet.Generator.Schema;

namespace Falconet.Generator.Planning;

/// <summary>
/// One header of a collection. <see cref="BitIndex"/> follows schema order among the bit-indexed headers; the
/// Content-Length header has -1 and is kept outside the bit set. <see cref="IsDefault"/>: the default schema defines it,
/// so the runtime's own collection already has its typed property.
/// </summary>
internal sealed record HeaderPlan(
    string Name,
    string Property,
    int BitIndex,
    bool IsContentLength,
    bool Primary,
    EquatableArray<string> Values,
    EquatableArray<ByteChunk> Chunks,
    bool IsDefault);

/// <summary>
/// The headers whose names have <see cref="Length"/> bytes: the chunk reads shared by all of them and the
/// order in which they are tested (primary headers first, then schema order), as indexes into the header list.
/// </summary>
internal sealed record BucketPlan(int Length, EquatableArray<ByteChunk> Reads, EquatableArray<int> Order);

/// <summary>Everything a header collection needs: headers (bit order, Content-Length last) and the buckets of its name matcher.</summary>
internal sealed record HeaderSetPlan(
    string TypeName,
    EquatableArray<HeaderPlan> Headers,
    EquatableArray<BucketPlan> Buckets,
    int BitCount);

/// <summary>Plans a header collection: bit indexes and length buckets with masked chunks.</summary>
internal static class HeaderPlanner
{
    public static HeaderSetPlan Plan(string typeName, EquatableArray<HeaderModel> headers)
    {
        var ordered = new List<HeaderModel>();
        HeaderModel? contentLength = null;
        foreach (HeaderModel header in headers)
        {
            if (header.ContentLength)
            {
                contentLength = header;
            }
            else
            {
                ordered.Add(header);
            }
        }

        int bitCount = ordered.Count;
        if (contentLength is not null)
        {
            ordered.Add(contentLength);
        }

        var plans = new List<HeaderPlan>(ordered.Count);
        for (int i = 0; i < ordered.Count; i++)
        {
            HeaderModel header = ordered[i];
            plans.Add(new HeaderPlan(
                header.Name,
                header.ContentLength ? "ContentLength" : MemberNames.ToPascalCase(header.Name),
                header.ContentLength ? -1 : i,
                header.ContentLength,
                header.Primary,
                header.Values,
                ByteChunks.CaseInsensitive(header.Name),
                header.IsDefault));
        }

        return new HeaderSetPlan(typeName, EquatableArray.From(plans), PlanBuckets(plans), bitCount);
    }

    private static EquatableArray<BucketPlan> PlanBuckets(List<HeaderPlan> headers)
    {
        var lengths = new SortedDictionary<int, List<int>>();
        for (int i = 0; i < headers.Count; i++)
        {
            int length = headers[i].Name.Length;
            if (!lengths.TryGetValue(length, out List<int>? members))
            {
                members = new List<int>();
                lengths.Add(length, members);
            }

            members.Add(i);
        }

        var buckets = new List<BucketPlan>();
        foreach (KeyValuePair<int, List<int>> pair in lengths)
        {
            var order = new List<int>();
            foreach (int index in pair.Value)
            {
                if (headers[index].Primary)
                {
                    order.Add(index);
                }
            }

            foreach (int index in pair.Value)
            {
                if (!headers[index].Primary)
                {
                    order.Add(index);
                }
            }

            var reads = new List<ByteChunk>();
            foreach ((int offset, int size) in ByteChunks.Layout(0, pair.Key))
            {
                reads.Add(new ByteChunk(offset, size, 0, 0));
            }

            buckets.Add(new BucketPlan(pair.Key, EquatableArray.From(reads), EquatableArray.From(order)));
        }

        return EquatableArray.From(buckets);
    }
}
