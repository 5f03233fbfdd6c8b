using System.Collections.Generic;
using System.Text;
using Falconet.Generator.Schema;

namespace Falconet.Generator.Planning;

/// <summary>
/// One header of a collection. <see cref="BitIndex"/> follows schema order among the bit-indexed headers; the
/// Content-Length header has -1 and is kept outside the bit set. <see cref="PrefixOffset"/> and
/// <see cref="PrefixLength"/> locate its "\r\nName: " bytes in the collection's name blob (Content-Length, written from its
/// own constant, has offset -1).
/// </summary>
public sealed record HeaderPlan(
    string Name,
    string Property,
    string Field,
    int BitIndex,
    bool IsContentLength,
    bool Primary,
    EquatableArray<string> Values,
    EquatableArray<ByteChunk> Chunks,
    int PrefixOffset,
    int PrefixLength);

/// <summary>
/// The headers whose names have <see cref="Length"/> bytes: the chunk reads shared by all of them and the
/// order in which they are tested (primary headers first, then schema order), as indexes into the header list.
/// </summary>
public sealed record BucketPlan(int Length, EquatableArray<ByteChunk> Reads, EquatableArray<int> Order);

/// <summary>Everything a header collection needs: headers (bit order, Content-Length last), buckets and the name blob.</summary>
public sealed record HeaderSetPlan(
    string TypeName,
    EquatableArray<HeaderPlan> Headers,
    EquatableArray<BucketPlan> Buckets,
    string NameBlob,
    int BitCount,
    bool HasContentLength);

/// <summary>Plans a header collection: bit indexes, length buckets with masked chunks, and the response name blob.</summary>
public static class HeaderPlanner
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
        var blob = new StringBuilder();
        for (int i = 0; i < ordered.Count; i++)
        {
            HeaderModel header = ordered[i];
            string prefix = "\r\n" + header.Name + ": ";
            string property = header.ContentLength ? "ContentLength" : MemberNames.ToPascalCase(header.Name);
            plans.Add(new HeaderPlan(
                header.Name,
                property,
                MemberNames.ToFieldName(property),
                header.ContentLength ? -1 : i,
                header.ContentLength,
                header.Primary,
                header.Values,
                ByteChunks.CaseInsensitive(header.Name),
                header.ContentLength ? -1 : blob.Length,
                prefix.Length));

            // Only bit-indexed headers go into the blob, in bit order: a header added at the end of the schema then
            // appends one blob line and one offset line, and no other line of the generated file moves.
            if (!header.ContentLength)
            {
                blob.Append(prefix);
            }
        }

        return new HeaderSetPlan(typeName, EquatableArray.From(plans), PlanBuckets(plans), blob.ToString(), bitCount, contentLength is not null);
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
