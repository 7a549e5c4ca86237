# A Julia array shared with gdap without a copy: rank 1's section of a 6 x 10 array whose rows are
# in blocks of 3 over 2 ranks and whose columns are whole, held in A (10 x 3: Julia, column-major,
# keeps the C shape reversed). gdap says where a global element lives, and local_view hands back
# A's own memory. Run: julia --project=bindings/julia/GDAP hello_gdap.jl (libgdap on the library path).
using GDAP

dims = [block(6, 2, 1, 3, 6), block(10, 1, 0, 0, 10)]  # C order: rows, then columns
everyone = GlobalMap([[block(6, 2, 0, 0, 3), block(10, 1, 0, 0, 10)], dims])
A = zeros(Float64, 10, 3)
section = DAPArray(A, dims)

for i in 0:2, j in 0:9                                  # C index (i, j) is A[j + 1, i + 1]
    A[j + 1, i + 1] = 100 * (3 + i) + j
end
rank, local_index = owner(everyone, [4, 7])
view = local_view(section)
println("global (4, 7) lives on rank $rank at local $local_index, holding $(view[local_index[2] + 1, local_index[1] + 1])")
println("gdap uses A itself: ", pointer(view) == pointer(A))
destroy!(section)
destroy!(everyone)
