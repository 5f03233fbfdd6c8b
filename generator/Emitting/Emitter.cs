using System;
using System.Collections.Generic;
using System.Text;
using Falconet.Generator.Planning;

namespace Falconet.Generator.Emitting;

/// <summary>One emitted source file.</summary>
internal sealed record EmittedFile(string HintName, string Text);

/// <summary>Turns a <see cref="GenerationPlan"/> into formatted views and renders them through the templates.</summary>
internal static class Emitter
{
    private const string MemberIndent = "        ";
    private const string ExtensionMemberIndent = "            ";

    /// <summary>The runtime's matchers and built-in collections, or an app's header set: see <see cref="GeneratorOptions.Runtime"/>.</summary>
    public static IReadOnlyList<EmittedFile> Emit(GenerationPlan plan)
    {
        FileView file = CreateFileView(plan);
        if (!plan.Options.Runtime)
        {
            return new[] { Render("HeaderSet.g.cs", TemplateRenderer.HeaderSet, CreateHeaderSetView(plan, file)) };
        }

        var files = new List<EmittedFile>
        {
            Render("KnownMethods.g.cs", TemplateRenderer.KnownMethods, CreateMethodsView(plan, file)),
            Render("KnownVersions.g.cs", TemplateRenderer.KnownVersions, CreateVersionsView(plan, file)),
            Render("RequestHeaders.g.cs", TemplateRenderer.Headers, CreateHeadersView(plan.Request, file, "global::Falconet.Http.RequestHeaderCollection",
                "Request headers of one HTTP/1.1 request: a typed property per known header of the schema and the masked name matcher the parser uses.", parsed: true)),
            Render("ResponseHeaders.g.cs", TemplateRenderer.Headers, CreateHeadersView(plan.Response, file, "global::Falconet.Http.ResponseHeaderCollection",
                "Response headers of one HTTP/1.1 response: a typed property per known header of the schema.", parsed: false)),
        };
        if (plan.HPack is { } hpack)
        {
            files.Add(Render("HPackStaticTable.g.cs", TemplateRenderer.HPackStaticTable, HPackEmitter.CreateStaticTableView(hpack, file)));
            files.Add(Render("HPackHuffman.g.cs", TemplateRenderer.HPackHuffman, HPackEmitter.CreateHuffmanView(hpack, file)));
        }

        return files;
    }

    internal static EmittedFile Render(string hintName, HandlebarsDotNet.HandlebarsTemplate<object, object> template, object view)
    {
        string text = template(view).Replace("\r\n", "\n");
        return new EmittedFile(hintName, text.TrimEnd('\n') + "\n");
    }

    private static FileView CreateFileView(GenerationPlan plan) => new()
    {
        GeneratorVersion = plan.GeneratorVersion,
        SchemaHash = plan.SchemaHash,
        Namespace = plan.Options.Namespace,
        Visibility = plan.Options.Visibility,
        GeneratedCode = "[global::System.CodeDom.Compiler.GeneratedCode(\"Falconet.Generator\", \"" + plan.GeneratorVersion + "\")]",
        Reads = "global::Falconet.Http.MatcherReads",
    };

    private static MethodsView CreateMethodsView(GenerationPlan plan, FileView file)
    {
        var view = new MethodsView { File = file };
        foreach (MethodPlan method in plan.Methods)
        {
            var item = new MethodView
            {
                Member = method.Member,
                Literal = CSharpText.StringLiteral(method.Name),
                Length = CSharpText.Int(method.Length),
            };
            string text = method.Name + " ";
            var conditions = new List<(string Code, string Comment)>();
            if (method.MinimumSpan > 8)
            {
                conditions.Add(("requestLine.Length >= " + CSharpText.Int(method.MinimumSpan), "// the method and its space span more than 8 bytes"));
            }

            foreach (ByteChunk chunk in method.Chunks)
            {
                string read = chunk.Offset == 0
                    ? "head"
                    : file.Reads + ".Read" + CSharpText.Int(chunk.Size * 8) + "(ref start, " + CSharpText.Int(chunk.Offset) + ")";
                string code = chunk.Mask == ByteChunks.FullMask(chunk.Size)
                    ? read + " == " + CSharpText.Hex(chunk.Value, chunk.Size)
                    : "(" + read + " & " + CSharpText.Hex(chunk.Mask, chunk.Size) + ") == " + CSharpText.Hex(chunk.Value, chunk.Size);
                conditions.Add((code, CSharpText.ChunkComment(text, chunk, text.Length, caseInsensitive: false)));
            }

            AddConditionLines(item.Lines, conditions);
            view.Methods.Add(item);
        }

        var tokens = new StringBuilder();
        for (char c = '!'; c <= '~'; c++)
        {
            if (Schema.HttpToken.IsTokenChar(c))
            {
                tokens.Append(c);
            }
        }

        view.TokenBytes = CSharpText.StringLiteral(tokens.ToString());
        return view;
    }

    private static VersionsView CreateVersionsView(GenerationPlan plan, FileView file)
    {
        var view = new VersionsView { File = file };
        foreach (VersionPlan version in plan.Versions)
        {
            view.Versions.Add(new VersionView
            {
                Member = version.Member,
                Literal = CSharpText.StringLiteral(version.Text),
                Value = CSharpText.Hex(version.Value, 8),
                Comment = "// " + CSharpText.Quote(version.Text) + " bytes 0..7, exact",
            });
        }

        return view;
    }

    private static HeadersView CreateHeadersView(HeaderSetPlan plan, FileView file, string baseType, string summary, bool parsed)
    {
        var view = new HeadersView
        {
            File = file,
            TypeName = plan.TypeName,
            BaseType = baseType,
            Summary = summary,
            Table = CreateTableView(plan, parsed),
            Matcher = parsed ? CreateMatcherView(plan, file.Reads) : null,
        };

        AddProperties(view.Properties, plan, MemberIndent, string.Empty, static _ => true);
        return view;
    }

    private static HeaderSetView CreateHeaderSetView(GenerationPlan plan, FileView file)
    {
        var view = new HeaderSetView
        {
            File = file,
            TypeName = "HeaderSet",
            ExtensionsName = "HeaderSetExtensions",
            RequestTable = CreateTableView(plan.Request, parsed: true),
            ResponseTable = CreateTableView(plan.Response, parsed: false),
            RequestMatcher = CreateMatcherView(plan.Request, file.Reads),
        };

        // The runtime's RequestHeaders and ResponseHeaders already have the default schema's properties.
        AddExtension(view, "Request", plan.Request, file);
        AddExtension(view, "Response", plan.Response, file);
        return view;
    }

    private static void AddExtension(HeaderSetView view, string collection, HeaderSetPlan plan, FileView file)
    {
        var extension = new ExtensionView
        {
            Receiver = "global::Falconet.Http." + collection + "Headers<global::" + file.Namespace + "." + view.TypeName + ">",
        };
        AddProperties(extension.Properties, plan, ExtensionMemberIndent, "headers.", static header => !header.IsDefault);
        if (extension.Properties.Count > 0)
        {
            view.Extensions.Add(extension);
        }
    }

    private static TableView CreateTableView(HeaderSetPlan plan, bool parsed)
    {
        var view = new TableView { HasKnownValues = parsed };
        foreach (HeaderPlan header in plan.Headers)
        {
            if (header.IsContentLength)
            {
                continue;
            }

            // The bit index on every line: a header inserted before others shows in the diff as the lines whose index moved.
            string index = " // bit " + CSharpText.Int(header.BitIndex);
            view.NameLines.Add(CSharpText.StringLiteral(header.Name) + "," + index);
            view.KnownValueLines.Add(KnownHeader(header) + index);
        }

        return view;
    }

    private static void AddProperties(List<HeaderView> properties, HeaderSetPlan plan, string indent, string receiver, Func<HeaderPlan, bool> include)
    {
        foreach (HeaderPlan header in plan.Headers)
        {
            if (!header.IsContentLength && include(header))
            {
                properties.Add(new HeaderView
                {
                    Literal = CSharpText.StringLiteral(header.Name),
                    Property = header.Property,
                    Index = CSharpText.Int(header.BitIndex),
                    Indent = indent,
                    Receiver = receiver,
                });
            }
        }
    }

    private static MatcherView CreateMatcherView(HeaderSetPlan plan, string reads)
    {
        var view = new MatcherView();
        foreach (BucketPlan bucket in plan.Buckets)
        {
            var bucketView = new BucketView { Length = CSharpText.Int(bucket.Length) };
            for (int r = 0; r < bucket.Reads.Count; r++)
            {
                ByteChunk read = bucket.Reads[r];
                bucketView.Reads.Add(CSharpText.ReadType(read.Size) + " r" + CSharpText.Int(r) + " = " + reads + ".Read"
                    + CSharpText.Int(read.Size * 8) + "(ref start, " + CSharpText.Int(read.Offset) + ");");
            }

            foreach (int index in bucket.Order)
            {
                HeaderPlan header = plan.Headers[index];
                var match = new MatchView
                {
                    Index = header.IsContentLength ? "global::Falconet.Http.HeaderTable.ContentLengthIndex" : CSharpText.Int(header.BitIndex),
                    Name = header.Name,
                };
                var conditions = new List<(string Code, string Comment)>();
                for (int c = 0; c < header.Chunks.Count; c++)
                {
                    ByteChunk chunk = header.Chunks[c];
                    conditions.Add((
                        "(r" + CSharpText.Int(c) + " & " + CSharpText.Hex(chunk.Mask, chunk.Size) + ") == " + CSharpText.Hex(chunk.Value, chunk.Size),
                        CSharpText.ChunkComment(header.Name.ToLowerInvariant(), chunk, header.Name.Length, caseInsensitive: true)));
                }

                AddConditionLines(match.Lines, conditions);
                bucketView.Matches.Add(match);
            }

            view.Buckets.Add(bucketView);
        }

        return view;
    }

    // One line per header: a header added to the schema adds a line, and new known values change only that header's line.
    private static string KnownHeader(HeaderPlan header)
    {
        var builder = new StringBuilder("new global::Falconet.Http.KnownHeader(").Append(CSharpText.StringLiteral(header.Name));
        foreach (string value in header.Values)
        {
            builder.Append(", ").Append(CSharpText.StringLiteral(value));
        }

        return builder.Append("),").ToString();
    }

    // "a && // comment" on every line but the last, which closes the condition: "z) // comment".
    private static void AddConditionLines(List<string> lines, List<(string Code, string Comment)> conditions)
    {
        for (int i = 0; i < conditions.Count; i++)
        {
            bool last = i == conditions.Count - 1;
            lines.Add(conditions[i].Code + (last ? ") " : " && ") + conditions[i].Comment);
        }
    }
}
